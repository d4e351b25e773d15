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
    "APPEND_KEPT",
    "CLEAR_ACTIVE",
    "COMPACT_KEPT",
    "END_RUN",
    "KEEP_KEPT",
    "MARK_DONE",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "UPDATE_THREAD",
    "WRITE_CHECKPOINT",
    "WRITE_STEP",
]

OWNED_SET = """
-- The key of the sorted set that lists thread KEYS[1] among its owner's threads ('owned' or
-- 'archived', by its flag), under prefix `prefix`; nil for a thread a tool call started.
local function owned_set(thread, prefix, archived)
  if redis.call('HEXISTS', thread, 'parent_id') == 1 then return nil end
  local who = redis.call('HGET', thread, 'owner')
  local set = archived and 'archived' or 'owned'
  if who then return prefix .. set .. ':' .. who end
  return prefix .. set .. '-nobody'
end
local function is_archived(thread)
  return redis.call('HGET', thread, 'archived') == '1'
end
"""
"""Lua shared by the scripts that keep an owner's sorted sets of threads. The set's key is
built from the thread's owner, so on Redis Cluster the prefix needs a hash tag (as for the
other scripts, which touch several keys)."""

WRITE_STEP = """#!lua
""" + OWNED_SET + """
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
local new_owner = h.owner and redis.call('HSETNX', KEYS[1], 'owner', h.owner) == 1
local archived = is_archived(KEYS[1])
local listed = owned_set(KEYS[1], h.prefix, archived)
if listed then
  if new_owner then  -- saved for nobody before: listed under its owner from now on
    local nobody = h.prefix .. (archived and 'archived' or 'owned') .. '-nobody'
    if nobody ~= listed then redis.call('ZREM', nobody, h.thread_id) end
  end
  if h.entries > 0 then
    redis.call('ZADD', listed, h.score, h.thread_id)
  else
    redis.call('ZADD', listed, 'NX', 0, h.thread_id)
  end
end
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

UPDATE_THREAD = """#!lua
""" + OWNED_SET + """
-- KEYS: 1 thread hash. ARGV: 1 prefix, 2 thread id, 3 '1' to set the title, 4 the title ('':
-- none), 5 archived: '', '0' or '1' ('' leaves it).
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == '1' then
  if ARGV[4] == '' then redis.call('HDEL', KEYS[1], 'title')
  else redis.call('HSET', KEYS[1], 'title', ARGV[4]) end
end
if ARGV[5] ~= '' then
  local was = is_archived(KEYS[1])
  local from = owned_set(KEYS[1], ARGV[1], was)
  redis.call('HSET', KEYS[1], 'archived', ARGV[5])
  local to = owned_set(KEYS[1], ARGV[1], ARGV[5] == '1')
  if from and from ~= to then
    local score = redis.call('ZSCORE', from, ARGV[2]) or 0
    redis.call('ZREM', from, ARGV[2])
    redis.call('ZADD', to, score, ARGV[2])
  end
end
return 1
"""

WRITE_CHECKPOINT = """#!lua
-- KEYS: 1 checkpoint heads hash, 2 checkpoint states hash, 3 run order list, 4 thread hash.
-- ARGV: 1 run id, 2 head JSON, 3 state JSON ('': none), 4 the run's status ('': none).
if redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
if ARGV[3] == '' then redis.call('HDEL', KEYS[2], ARGV[1])
else redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
if ARGV[4] ~= '' and redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('HSET', KEYS[4], 'run_status', ARGV[4])
end
return 1
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
-- KEYS: 1 event stream. ARGV: 1 ttl in ms, 2 how many events the stream keeps (0: all), then
-- the events' JSON texts.
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if last[1] and last[1][2][1] == 'done' then return false end
local ids = {}
for i = 3, #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], '*', 'event', ARGV[i])
end
if tonumber(ARGV[2]) > 0 then redis.call('XTRIM', KEYS[1], 'MAXLEN', ARGV[2]) end
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

KEEP_KEPT = """#!lua
-- KEYS: 1 kept-state key, 2 its changes (list), 3 its meta (hash), 4 lease hash.
-- ARGV: 1 the writer's lease token ('' for none), 2 the kept JSON, 3 its version ('' for none).
-- The whole kept state: its changes go, its generation moves on (a compaction that read the
-- state before is not written).
if ARGV[1] ~= '' then
  local holder = redis.call('HGET', KEYS[4], 'token')
  if holder ~= ARGV[1] then return {'fence', holder or ''} end
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[3], 'version', ARGV[3], 'size', string.len(ARGV[2]), 'added', 0)
redis.call('HINCRBY', KEYS[3], 'generation', 1)
return {'ok', ''}
"""

APPEND_KEPT = """#!lua
-- KEYS: as KEEP_KEPT. ARGV: 1 the writer's lease token ('' for none), 2 the version the
-- changes extend, 3 the version of the last one, 4 their size, 5 MAX_CHANGES,
-- 6 COMPACT_SHARE, then the changes' JSON texts. Gives {'ok', '1'} when the changes have
-- grown enough to be folded into the base ('0' else), {'moved', version} when the kept state
-- is not at ARGV[2].
if ARGV[1] ~= '' then
  local holder = redis.call('HGET', KEYS[4], 'token')
  if holder ~= ARGV[1] then return {'fence', holder or ''} end
end
local meta = redis.call('HMGET', KEYS[3], 'version', 'size', 'added')
if meta[1] ~= ARGV[2] or redis.call('EXISTS', KEYS[1]) == 0 then
  return {'moved', meta[1] or ''}
end
for i = 7, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
local added = tonumber(meta[3] or '0') + tonumber(ARGV[4])
redis.call('HSET', KEYS[3], 'version', ARGV[3], 'added', added)
local many = redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[5])
if many or added > tonumber(meta[2] or '0') * tonumber(ARGV[6]) then return {'ok', '1'} end
return {'ok', '0'}
"""

COMPACT_KEPT = """#!lua
-- KEYS: 1 kept-state key, 2 its changes, 3 its meta. ARGV: 1 the generation read, 2 how
-- many changes (the first ones) the folded JSON holds, 3 the folded JSON. Written only if no
-- whole write or compaction came since it was read; the changes appended since stay.
if redis.call('HGET', KEYS[3], 'generation') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
local added = 0
for _, text in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do added = added + #text end
redis.call('HSET', KEYS[3], 'size', string.len(ARGV[3]), 'added', added)
redis.call('HINCRBY', KEYS[3], 'generation', 1)
return 1
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
