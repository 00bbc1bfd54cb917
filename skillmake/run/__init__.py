"""Layer 4, run: executing one trial or one grade — keys (what makes a trial or grade stale; they name the agent's
CLI version, which only the agents know, so they live here rather than in store/), the loaded project (project),
process supervision (process, supervisor, reaper), hermetic workspaces (hermetic, staging, workspace), trial and
grade, the spending ledger (budget), the requests in flight per provider and model (ratelimit), the judges' HTTP
client without an SDK (wire), the SDK loader (sdk) and agents/, checks/, judges/. Imports store and below; never
doit."""
