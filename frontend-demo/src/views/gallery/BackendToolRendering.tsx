// Backend tool rendering: `get_weather` runs on the server; `useRenderTool` draws its call
// while it runs and its JSON result as a card.

import { z } from "zod";
import { useRenderTool } from "@copilotkit/react-core/v2";
import { FeaturePage, Try } from "./frame";

const AGENT = "backend_tool_rendering";

type Weather = { city: string; temperature: number; feels_like: number; conditions: string; humidity: number; wind: number };

function parse(result: string | undefined): Weather | null {
  try {
    return result ? (JSON.parse(result) as Weather) : null;
  } catch {
    return null;
  }
}

function WeatherCard({ city, status, result }: { city?: string; status: string; result?: string }) {
  const weather = parse(result);
  if (!weather) {
    return (
      <div className="weather pending" data-testid="weather-card" data-status={status}>
        Getting the weather in {city ?? "…"}…
      </div>
    );
  }
  return (
    <div className="weather" data-testid="weather-card" data-status="complete">
      <div className="weather-city">{weather.city}</div>
      <div className="weather-temp">{weather.temperature}°C</div>
      <div className="weather-conditions">{weather.conditions}</div>
      <div className="muted">
        feels like {weather.feels_like}°C · humidity {weather.humidity}% · wind {weather.wind} km/h
      </div>
    </div>
  );
}

export default function BackendToolRendering() {
  return (
    <FeaturePage agentId={AGENT} hint="Ask for the weather somewhere…">
      <Renderer />
      <section className="card">
        <h2>Backend tool rendering</h2>
        <p>The agent's own tool <code>get_weather</code> runs on the server; the page draws its call and its JSON result as a card in the chat.</p>
        <Try phrases={["what's the weather in Paris?", "weather in Tokyo"]} />
      </section>
    </FeaturePage>
  );
}

function Renderer() {
  useRenderTool({
    name: "get_weather",
    parameters: z.object({ city: z.string() }),
    render: ({ status, parameters, result }) => (
      <WeatherCard city={parameters?.city} status={status} result={typeof result === "string" ? result : undefined} />
    ),
  });
  return null;
}
