"""Layer 8, compare: blind A/B comparison (`skillmake compare`): two arms or two skill versions, judged pair by
pair in both orders. Independent of view/ (a contract); imports the engine and below.

Execution layer: sides.py and versions.py (with git.py) say what is compared; outputs.py gets each side's trial
outputs, from the store or by running them; comparator.py is the judge's request and reply, preflight.py checks
the judge can be reached, cache.py keeps one record per judged ordered pair, pairs.py judges and combines;
combine.py and winrate.py are the rules and the statistic; document.py and table.py the result file and the
terminal. The command itself is skillmake/commands/compare.py (the entry layer).
"""
