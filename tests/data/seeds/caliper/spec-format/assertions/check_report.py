from pathlib import Path

assert Path("report.md").exists(), "report.md was not written"
