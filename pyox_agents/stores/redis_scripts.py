"""The Lua scripts of `RedisStore`: each one check-then-change that must be atomic.

Redis runs a script whole, with no other command in between, and every script here does all
its checks before its first write, so a refused call changes nothing. The `#!lua` line makes
Redis (7 or later) refuse a script up front when it is out of memory, rather than stop it
half-way through its writes.
"""

from __future__ import annotations

__all__ = [
    "ACQUIRE_LEASE",
    "APPEND_EVENTS",
    "CLEAR_ACTIVE",
    "END_RUN",
    "KEEP_FENCED",
    "MARK_DONE",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "WRITE_STEP",
]

WRITE_STEP = """#!lua
-- KEYS: 1 thread hash, 2 entries list, 3 threads zset, 4 first-save counter, 5 run hash,
--       6 audit list, 7 lease hash.
-- ARGV: 1 header JSON, 2 shared state text, 3 run text, then the entries, then the audit records.
local h = cjson.decode(ARGV[1])
if h.fence then
  local holder = redis.call('HGET', KEYS[7], 'token')
  if holder ~= h.fence then return {'fence', holder or ''} end
end
local held = tonumber(redis.call('HGET', KEYS[1], 'entries') or '0')
if held ~= h.first_seq then return {'entries', tostring(held)} end
if h.run_id then
  local next_audit = redis.call('LLEN', KEYS[6])
  if h.audit > 0 and h.first_audit ~= next_audit then return {'audit', tostring(next_audit)} end
end
-- Checked: from here on the step lands whole.
local function push(key, from, to)
  local i = from
  while i <= to do
    local j = math.min(i + 999, to)
    redis.call('RPUSH', key, unpack(ARGV, i, j))
    i = j + 1
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'entries', 0)
  redis.call('ZADD', KEYS[3], redis.call('INCR', KEYS[4]), h.thread_id)
end
if h.parent_id then redis.call('HSETNX', KEYS[1], 'parent_id', h.parent_id) end
if h.owner then redis.call('HSETNX', KEYS[1], 'owner', h.owner) end
if h.entries > 0 then
  push(KEYS[2], 4, 3 + h.entries)
  redis.call('HINCRBY', KEYS[1], 'entries', h.entries)
  if h.created_at then redis.call('HSETNX', KEYS[1], 'created_at', h.created_at) end
  if h.updated_at then
    redis.call('HSET', KEYS[1], 'updated_at', h.updated_at)
  else
    redis.call('HDEL', KEYS[1], 'updated_at')
  end
end
if h.shared_version then
  redis.call('HSET', KEYS[1], 'shared_state', ARGV[2], 'shared_version', h.shared_version)
end
if h.run_id then
  redis.call('HSET', KEYS[5], 'body', ARGV[3])
  redis.call('HSETNX', KEYS[5], 'thread_id', h.thread_id)
  if h.audit > 0 then push(KEYS[6], 4 + h.entries, 3 + h.entries + h.audit) end
end
return {'ok', ''}
"""

ACQUIRE_LEASE = """#!lua
-- KEYS: 1 lease hash, 2 token counter. ARGV: 1 owner, 2 ttl in ms.
local holder = redis.call('HGET', KEYS[1], 'owner')
if holder and holder ~= ARGV[1] then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'token', token)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return token
"""

RENEW_LEASE = """#!lua
-- KEYS: 1 lease hash. ARGV: 1 owner, 2 token, 3 ttl in ms.
local lease = redis.call('HMGET', KEYS[1], 'owner', 'token')
if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""

RELEASE_LEASE = """#!lua
-- KEYS: 1 lease hash. ARGV: 1 owner, 2 token.
local lease = redis.call('HMGET', KEYS[1], 'owner', 'token')
if lease[1] ~= ARGV[1] or lease[2] ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

APPEND_EVENTS = """#!lua
-- KEYS: 1 event stream. ARGV: 1 ttl in ms, then the events' JSON texts.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] == 'done' then return false end
local ids = {}
for i = 2, #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', 'event', ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return ids
"""

MARK_DONE = """#!lua
-- KEYS: 1 event stream. ARGV: 1 ttl in ms.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if not (last[1] and last[1][2][1] == 'done') then
  redis.call('XADD', KEYS[1], '*', 'done', '1')
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

CLEAR_ACTIVE = """#!lua
-- KEYS: 1 active-run key. ARGV: 1 run key.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""

KEEP_FENCED = """#!lua
-- KEYS: 1 kept-state key, 2 lease hash. ARGV: 1 the writer's lease token, 2 the kept JSON.
local holder = redis.call('HGET', KEYS[2], 'token')
if holder ~= ARGV[1] then return {'fence', holder or ''} end
redis.call('SET', KEYS[1], ARGV[2])
return {'ok', ''}
"""

END_RUN = """#!lua
-- KEYS: 1 event stream, 2 active-run key, 3 lease hash.
-- ARGV: 1 done ttl in ms, 2 run key, 3 owner, 4 token, then the run's last events' JSON texts.
-- APPEND_EVENTS, MARK_DONE, CLEAR_ACTIVE and RELEASE_LEASE at once: a follower that hears the
-- run's end finds its thread free.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local logged = 0
if not (last[1] and last[1][2][1] == 'done') then
  for i = 5, #ARGV do
    redis.call('XADD', KEYS[1], '*', 'event', ARGV[i])
    logged = logged + 1
  end
  redis.call('XADD', KEYS[1], '*', 'done', '1')
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
local lease = redis.call('HMGET', KEYS[3], 'owner', 'token')
local released = 0
if lease[1] == ARGV[3] and lease[2] == ARGV[4] then
  redis.call('DEL', KEYS[3])
  released = 1
end
return {logged, released}
"""
