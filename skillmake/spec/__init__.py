"""Layer 2, spec: reading what users write — YAML/JSON with line:column source maps (sourcemap, source, yamlread,
yamlsyntax), JSON Schema validation (schema, draft7, wellformed, inline), the frozen model (model), the loader
(loader), other tools' formats (adapters/), discovery, the project configuration and run settings (config,
overrides, settings), the skill's files and system prompt (skillfiles) and `validate`. Imports only core."""
