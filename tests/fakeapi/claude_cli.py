"""A stand-in `claude` executable for unit tests of the claude-code judge: prints a scripted JSON result."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


class FakeClaude:
    """A stand-in `claude` executable (SKILLMAKE_CLAUDE) printing a scripted `--output-format json` result."""

    def __init__(self, folder: Path, *, version: str = "2.1.328 (Claude Code)") -> None:
        self.result_file = folder / "claude-result.json"
        self.argv_file = folder / "claude-argv.jsonl"
        self.path = folder / "claude"
        self.path.write_text(
            f"#!{sys.executable}\n"
            "import json, sys\n"
            "if '--version' in sys.argv:\n"
            f"    print({version!r}); sys.exit(0)\n"
            "sys.stdin.read()\n"
            f"with open({str(self.argv_file)!r}, 'a') as f: f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
            f"spec = json.load(open({str(self.result_file)!r}))\n"
            "sys.stderr.write(spec.get('stderr', ''))\n"
            "sys.stdout.write(spec['stdout'])\n"
            "sys.exit(spec.get('code', 0))\n")
        self.path.chmod(0o755)

    def answer(self, *, structured: dict[str, Any] | None = None, text: str = "", is_error: bool = False,
               stdout: str | None = None, stderr: str = "", code: int = 0) -> None:
        result: dict[str, Any] = {"type": "result", "subtype": "success", "is_error": is_error, "result": text,
                                  "num_turns": 1, "total_cost_usd": 0.001,
                                  "usage": {"input_tokens": 100, "output_tokens": 20}}
        if structured is not None:
            result["structured_output"] = structured
        body = json.dumps(result) if stdout is None else stdout
        self.result_file.write_text(json.dumps({"stdout": body, "stderr": stderr, "code": code}))

    def calls(self) -> list[list[str]]:
        if not self.argv_file.exists():
            return []
        return [json.loads(line) for line in self.argv_file.read_text().splitlines()]
