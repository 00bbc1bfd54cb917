"""The format-conformance table of docs/formats.md: one row per seed field, its status, and the tests that prove it.

This is the data; docs/formats.md's "Conformance" section is generated from it (`python scripts/conformance.py
--write` rewrites the section, `--check` exits 1 when the page differs), and tests/functional/
test_conformance_table.py fails when a row's tests do not exist, are expected to fail, or the page is stale.

Statuses: `supported` (runs as the seed documents it), `partial` (runs, with the difference said), `refused`
(deliberately not accepted, why said), `gap` (not done yet: the note is the justification and, where there is one,
an xfail(strict) test pins the expectation), `elsewhere` (another issue owns it: triggers, review viewer).
A supported, partial or refused row names at least one test, which must pass (no xfail); a gap row says why in
its note, and the tests it names (if any) show the boundary as it is today.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "formats.md"
STATUSES = ("supported", "partial", "refused", "gap", "elsewhere")
PASSING = ("supported", "partial", "refused")  # statuses whose tests must exist and pass

U, F = "tests/unit/", "tests/functional/"
US = U + "spec/"
CL_U, CL_F = U + "spec/test_adapters_clauditor.py::", F + "test_seed_clauditor.py::"
SC_U, SC_F = U + "spec/test_adapters_skill_creator.py::", F + "test_seed_skill_creator.py::"
CA_U, CA_F = U + "spec/test_adapters_caliper.py::", F + "test_seed_caliper.py::"
EV_U, EV_F = U + "spec/test_adapters_eva.py::", F + "test_seed_eva.py::"
INC = F + "test_incremental_seeds.py::"
TRG = F + "test_triggers.py::"
CF, HU = F + "test_captured_output.py::", U + "run/test_agents_hang.py::"
SR_F = F + "test_skill_creator_results.py::"
CJ, E2E = U + "run/test_judges_codex.py::", "tests/e2e/test_judge_codex_cli.py::"
PK = U + "results/test_caliper_results.py::"
EH, PR = F + "test_eva_history.py::", F + "test_promote.py::"
CU, CO, CB = U + "commands/test_caliper.py::", F + "test_caliper_output.py::", F + "test_caliper_baseline.py::"
SN = F + "test_snapshots.py::"
CC, CFL = F + "test_clauditor_cli.py::", U + "commands/test_clauditor.py::"
DI = "tests/differential/"
CD = U + "spec/test_adapters_caliper_defaults.py::"
DC, DE = "tests/differential/test_caliper_loader.py::", "tests/differential/test_caliper_end_to_end.py::"
CLI, AD = F + "test_caliper_cli.py::", F + "test_seed_agent_defaults.py::"


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    field: str
    status: str
    note: str
    tests: tuple[str, ...] = ()


def row(field: str, status: str, note: str, *tests: str) -> Row:
    return Row(field=field, status=status, note=note, tests=tests)


FORMATS: dict[str, tuple[Row, ...]] = {
    "clauditor": (
        row("placement `.claude/commands/<n>.eval.json` beside `<n>.md`", "supported", "the command is the skill",
            CL_U + "test_the_skill_is_found_by_placement", CL_F + "test_validate_accepts_the_reference_examples"),
        row("`SKILL.eval.json` / `assets/*.eval.json` in a SKILL.md folder", "supported",
            "the spec is named after the skill folder and is not part of the skill",
            CL_F + "test_the_skill_folder_example_runs_on_the_harness_clauditor_would_choose",
            INC + "test_clauditor_assertion_edit_inside_the_skill_folder_regrades_without_rerunning"),
        row("`eval.json` beside SKILL.md", "supported", "found only beside a SKILL.md and only when its keys are "
            "clauditor's; spec and case named after the skill folder; not part of the skill",
            F + "test_clauditor_discovery.py::test_only_the_eval_json_beside_a_skill_md_with_clauditor_keys_is_claimed",
            F + "test_clauditor_discovery.py::test_an_eval_json_seed_runs_named_after_its_skill_and_validates",
            U + "spec/test_adapters_clauditor_edges.py::test_eval_json_at_the_top_of_a_skill_is_not_part_of_the_skill"),
        row("clauditor keys (`variance`, `test_args`, …) written in a skillmake spec", "supported", "told what "
            "skillmake writes instead, not a fuzzy 'did you mean'",
            US + "test_adapters_clauditor_edges.py::test_a_clauditor_key_in_a_native_spec_says_what_skillmake_writes"),
        row("clauditor's exit codes (0 / 1 failed / 2 input error / 3 API error)", "supported", "`skillmake clauditor "
            "…` exits as clauditor: 2 for a bad flag, no such skill, an invalid spec or missing credentials, 3 when a "
            "grade could not be judged (judge_error); plain `skillmake` keeps its own table (README, Exit codes)",
            CFL + "test_skillmakes_exit_codes_as_clauditors",
            CC + "test_input_errors_are_exit_2_with_the_fix_and_run_nothing",
            CC + "test_an_invalid_spec_is_exit_2_located_in_its_own_lines",
            CC + "test_missing_judge_credentials_are_exit_2_before_any_run",
            CC + "test_a_judge_that_cannot_be_reached_is_exit_3",
            F + "test_clauditor_discovery.py::test_a_variable_clauditor_refuses_is_a_located_error_and_exit_2"),
        row("`skill_name`, `description`", "supported", "→ the case id (a valid id) and `description`",
            CL_U + "test_one_case_named_after_the_skill_with_test_args"),
        row("`test_args` (default \"\")", "supported", "→ `args`; the prompt is `/<skill> <args>`",
            CL_U + "test_one_case_named_after_the_skill_with_test_args",
            CL_U + "test_without_test_args_the_skill_runs_with_none",
            INC + "test_clauditor_test_args_edit_reruns_that_spec_only"),
        row("`input_files` and their load-time rules", "supported", "the native rules, located in the seed file",
            CL_F + "test_a_malformed_clauditor_spec_is_located_in_its_own_lines",
            INC + "test_clauditor_fixture_edit_reruns_only_the_spec_that_stages_it"),
        row("`assertions[]`: all ten types, `id`, `name`", "supported", "→ `checks` that count as clauditor 0.1.3 "
            "counts (has_entries: `**N. ` only; min_count: no multiline; has_format: `findall` of clauditor's own "
            "registry; has_urls: every occurrence); a bad regex or a count of 0 is accepted as clauditor accepts it "
            "(warned); differential suite: 5065/5065 verdicts agree with clauditor's run_assertions",
            CL_U + "test_the_reference_examples_load",
            INC + "test_clauditor_assertion_edit_regrades_without_rerunning",
            DI + "test_clauditor_assertions.py::test_clauditor_and_skillmake_give_the_same_verdicts",
            DI + "test_clauditor_assertions.py::test_the_findings_count_as_clauditor"),
        row("what clauditor's loader accepts and refuses", "supported", "ids required on assertions, fields and "
            "criteria and unique across them, has_format and field formats from clauditor's registry only; unknown "
            "keys, out-of-range thresholds, `n_runs: 0`, min_length above max_length, a bad regex are accepted "
            "(warned); an output_file named like a staged input is accepted (clauditor reads the input back); "
            "75/76 specs agree with EvalSpec.from_file, the one left is listed in \"clauditor: what still differs\"",
            DI + "test_clauditor_loader.py::test_clauditor_and_skillmake_accept_and_refuse_the_same_specs",
            DI + "test_clauditor_loader.py::test_what_clauditor_accepts_but_is_surely_a_mistake_is_a_warning"),
        row("legacy `value` key", "refused", "one error at the key with clauditor's migration hint (`write needle`, "
            "pattern, length, count or format); no 'missing' error",
            U + "spec/test_adapters_clauditor_edges.py::test_legacy_value_is_one_error_with_clauditors_migration_hint",
            CL_F + "test_a_malformed_clauditor_spec_is_located_in_its_own_lines"),
        row("`sections` / `tiers` / `fields` (`required` default true), `format`", "supported",
            "→ `sections`, clauditor's default written out, a field's format matched with clauditor's own pattern",
            CL_U + "test_section_fields_are_required_unless_they_say_not"),
        row("`output_file`, `output_files`", "supported", "both captured (clauditor reads `output_file` only)",
            CL_U + "test_the_reference_examples_load"),
        row("`grading_criteria[]`, `grading_model`", "supported", "→ `criteria`, `judge.model`",
            CL_U + "test_grading_criteria_become_criteria_with_the_judge",
            INC + "test_clauditor_grading_criteria_edit_regrades_without_rerunning"),
        row("`grading_provider`, `transport` (`api`/`cli`/`auto`), `CLAUDITOR_GRADING_PROVIDER`, "
            "`CLAUDITOR_TRANSPORT`", "supported", "→ `judge.provider` with clauditor's precedence",
            CL_U + "test_judge_provider_precedence"),
        row("`harness` (`claude-code`/`codex`/`auto`), `CLAUDITOR_HARNESS`", "supported",
            "→ `agent.kind` with clauditor's precedence; where it is `auto` (written or by default) the project's "
            "`[tool.skillmake] agent` runs the spec instead", CL_U + "test_harness_precedence",
            CL_U + "test_harness_auto_takes_claude_when_it_is_found",
            CL_F + "test_the_skill_folder_example_runs_on_the_harness_clauditor_would_choose"),
        row("the project's agent (`[tool.skillmake] agent`) for clauditor specs", "supported",
            "lent where the harness is `auto`; clauditor's sync_tasks and allow_hang_heuristic still apply",
            INC + "test_clauditor_runs_on_the_projects_command_agent"),
        row("`grade_thresholds`, `variance.min_stability`", "supported", "clauditor's gate: the share of "
            "grading_criteria the primary run passes and their mean score (defaults 0.7 / 0.5 when unset), and "
            "under --variance the share of runs that pass (default 0.8)",
            CL_U + "test_variance_thresholds_and_settings",
            CC + "test_grade_gates_on_the_share_of_criteria_as_clauditor"),
        row("`variance.n_runs`", "supported", "read by neither clauditor's grade nor validate: one run (`--variance "
            "N` adds N); an edit of it runs nothing",
            INC + "test_clauditor_n_runs_is_not_a_trial_count_and_editing_it_runs_nothing",
            CC + "test_grade_and_validate_run_once_whatever_n_runs_and_the_projects_trials"),
        row("`user_prompt`, `timeout`, `sync_tasks`, `system_prompt`", "supported", "same names",
            CL_U + "test_variance_thresholds_and_settings"),
        row("`trigger_tests`", "supported", "trigger trials on the project's claude-code or codex agent, 3 runs per "
            "query, threshold 0.5 (docs/triggers.md)", TRG + "test_clauditors_trigger_tests_run_on_the_projects_agent"),
        row("a spec with nothing to grade", "supported", "accepted with a warning, as clauditor's loader accepts it: "
            "`validate` passes every run, `grade` exits 1 running nothing (no grading_criteria)",
            DI + "test_clauditor_loader.py::test_clauditor_and_skillmake_accept_and_refuse_the_same_specs",
            CC + "test_grade_without_grading_criteria_exits_1_and_runs_nothing"),
        row("`--output` captured-output mode and its exit codes", "supported", "`skillmake grade --output FILE "
            "[SPEC] [--case ID]`: checks and judges, no agent, nothing stored; 0 pass, 1 fail, 2 invalid spec (usage "
            "errors 3)", CF + "test_a_passing_output_is_graded_without_running_the_agent",
            CF + "test_a_failing_output_exits_1_and_says_which_check_failed"),
        row("`allow_hang_heuristic`", "supported", "a claude-code run that stops after one turn on a question is an "
            "`error` (never cached); `false` grades it",
            HU + "test_a_one_turn_run_that_ends_asking_a_question_is_a_hang",
            CL_F + "test_a_run_that_stops_to_ask_a_question_is_an_interactive_hang"),
        row("`clauditor grade` / `validate` / `triggers SKILL.md` command lines", "supported", "`skillmake clauditor "
            "CMD SKILL.md [FLAGS]`: the spec found as clauditor finds it (`<stem>.eval.json` beside the skill, or "
            "`--eval PATH`), run incrementally (a repeat runs nothing; validate and grade share trials); `validate` "
            "runs the assertions only and needs no judge",
            CC + "test_grade_runs_and_judges_once_then_nothing_and_validate_reuses_the_trials",
            CC + "test_validate_runs_the_skill_and_its_assertions_with_no_model",
            CC + "test_a_failed_assertion_is_exit_1_with_the_evidence",
            CC + "test_triggers_runs_only_the_trigger_trials_with_clauditors_exit_code",
            CC + "test_the_skill_is_found_by_its_skill_md_and_the_eval_flag_wins",
            CC + "test_eval_takes_a_spec_anywhere_and_a_stray_spec_does_not_fail_the_project"),
        row("what `clauditor grade` gates on", "supported", "as clauditor: the criteria alone (assertions and sections "
            "are graded and shown, not gated); the real clauditor CLI and `skillmake clauditor grade` agree on 6/6 "
            "exit codes and criteria-passed counts against one fake API",
            CC + "test_a_failed_assertion_is_exit_1_with_the_evidence",
            CC + "test_grade_gates_on_the_share_of_criteria_as_clauditor",
            DI + "test_clauditor_grade_e2e.py::test_clauditor_and_skillmake_grade_the_same_specs_alike"),
        row("`.clauditor/iteration-N/<skill>/`", "partial", "written after each `grade`: grading.json (`results[]`), "
            "assertions.json and run-k/output.txt in clauditor's shape (checked against the real tool's); "
            "extraction.json, context.json, timing.json and history.jsonl are not (see below)",
            CC + "test_grade_writes_clauditors_iteration_folder_each_time",
            DI + "test_clauditor_grade_e2e.py::test_clauditor_and_skillmake_grade_the_same_specs_alike"),
        row("`--harness`, `--transport`, `--grading-provider` (flag > CLAUDITOR_* > field > auto)", "supported",
            "on `skillmake clauditor …` and on a plain run (for clauditor specs)",
            CFL + "test_the_harness_flag_beats_the_variable_which_beats_the_field",
            CFL + "test_judge_flags_beat_the_variables_and_the_fields",
            CFL + "test_a_run_takes_clauditors_flags_and_spec_selection",
            CC + "test_flags_beat_the_environment_which_beats_the_spec"),
        row("`--variance N`, `--model`, `--timeout`", "supported", "1 + N runs, as clauditor counts them (only the new "
            "ones run); the grading model; each run's timeout",
            CC + "test_variance_is_one_plus_n_runs_and_only_the_new_ones_run",
            CC + "test_flags_beat_the_environment_which_beats_the_spec"),
        row("`--sync-tasks`, `--no-api-key` (and `--transport cli` implying it)", "supported", "the agent's setting "
            "(in the trial key); claude gets CLAUDE_CODE_OAUTH_TOKEN and no API key (not in any key)",
            CC + "test_sync_tasks_reaches_claude_and_is_a_new_agent_setting",
            CC + "test_no_api_key_gives_claude_the_subscription_token_only",
            CC + "test_transport_cli_implies_no_api_key_and_says_so"),
        row("`--baseline`, `--min-baseline-delta`", "supported", "the without_skill arm for this run; exit 1 when the "
            "skill's pass rate is more than F below its baseline's (needs --baseline, not with --output, as clauditor)",
            CC + "test_min_baseline_delta_fails_a_skill_worse_than_no_skill",
            CC + "test_input_errors_are_exit_2_with_the_fix_and_run_nothing"),
        row("`--json`, `--dry-run`, `--output`", "partial", "`--json` prints skillmake's report.json (grade), the "
            "assertion results (validate) or the trigger section (triggers) alone on stdout, not clauditor's "
            "envelope; `--dry-run` prints what would run and the cost (`explain`), not the prompt",
            CC + "test_json_puts_the_report_alone_on_stdout",
            CC + "test_dry_run_says_what_would_run_and_runs_nothing",
            CC + "test_captured_output_is_graded_or_checked_without_running_the_skill"),
        row("`--iteration`, `--force`, `--diff`, `--only-criterion`, `--no-transcript`", "refused", "no iteration "
            "slots (every run is a history row; the summary shows Δ previous), criteria are judged together and "
            "cached, so a subset saves nothing: each refused (exit 2) saying so; `--no-transcript` is accepted "
            "(transcripts are part of each trial's record)",
            CC + "test_input_errors_are_exit_2_with_the_fix_and_run_nothing"),
        row("clauditor's other commands (`capture`, `extract`, `audit`, `trend`, `suggest`, …)", "refused", "exit 2 "
            "naming what does their job in skillmake (init, compare, view, optimize-description, history.jsonl)",
            CC + "test_commands_clauditor_has_and_skillmake_does_elsewhere_say_where"),
        row("shared trials with the hand-written native twin", "supported", "proven by counting calls",
            CL_F + "test_a_seed_spec_and_its_native_twin_share_trials_and_verdicts"),
        row("malformed files located at their own `line:col`", "supported", "the corpus in tests/data/seeds",
            CL_F + "test_the_malformed_corpus_is_large_and_complete",
            CL_F + "test_a_malformed_clauditor_spec_is_located_in_its_own_lines"),
        row("incrementality catalogue", "supported", "every entry holds; clauditor has no without_skill arm",
            INC + "test_clauditor_no_change_and_touch_without_change_run_nothing",
            INC + "test_clauditor_skill_edit_reruns_only_that_skill_and_revert_reuses",
            INC + "test_clauditor_whitespace_and_key_order_in_the_json_change_nothing",
            INC + "test_clauditor_n_runs_is_not_a_trial_count_and_editing_it_runs_nothing"),
    ),
    "skill-creator": (
        row("`evals/evals.json`; the skill is the parent of `evals/`", "supported",
            "`evals/` is not part of the skill (neither hashed nor installed)",
            SC_U + "test_both_examples_of_the_seed_documents_are_detected_as_skill_creator",
            INC + "test_skill_creator_editing_evals_json_alone_never_reruns_a_trial"),
        row("`skill_name`, `description`", "supported", "the spec is named after the skill folder",
            SC_U + "test_the_seed_documents_example_translates_field_by_field"),
        row("`version` (seen in real files)", "supported", "accepted; no native twin: `validate -v` shows the note",
            US + "test_adapters_translation_notes.py::test_validate_verbose_prints_one_line_per_note_under_the_file"),
        row("`evals[].id` (integer)", "supported", "case `eval-<id>`, lossless both ways",
            SC_U + "test_case_ids_are_lossless"),
        row("`eval_id` in result files", "supported", "the integer id (native `cases[].eval_id`) in benchmark.json "
            "and eval_metadata.json", SR_F + "test_eval_ids_and_assertion_names_reach_every_result_file"),
        row("`evals[].prompt`", "supported", "→ `prompt`",
            INC + "test_skill_creator_prompt_edit_reruns_that_eval_only"),
        row("`evals[].expected_output`", "supported", "shown to judges; the one expectation of an eval with none",
            SC_U + "test_the_seed_documents_example_translates_field_by_field"),
        row("`evals[].files[]` (relative to the skill)", "supported", "→ `input_files`",
            SC_U + "test_expectations_and_files_relative_to_the_skill_folder",
            INC + "test_skill_creator_fixture_edit_reruns_only_the_evals_that_stage_it"),
        row("`evals[].expectations[]`", "supported", "→ `expectations`",
            INC + "test_skill_creator_expectation_edit_regrades_without_rerunning"),
        row("`evals[].assertions[].description`", "supported", "→ `expectations`",
            SC_U + "test_expectations_come_before_assertions_and_category_is_a_tag",
            INC + "test_skill_creator_assertion_description_edit_regrades_without_rerunning"),
        row("`evals[].assertions[].name`", "supported", "a named expectation (`{text, name}`): a label, not a key "
            "input — renaming re-runs and re-judges nothing",
            SR_F + "test_renaming_an_assertion_relabels_without_running_or_judging"),
        row("`evals[].assertions[].type`", "supported", "a label of the named expectation (`{text, name, type}`), "
            "kept in eval_metadata.json; the judge grades the description, so an edit re-runs and re-judges nothing",
            SC_U + "test_the_seed_documents_example_translates_field_by_field",
            SR_F + "test_an_assertions_type_is_kept_in_eval_metadata_and_an_edit_runs_nothing"),
        row("`evals[].category` (seen in real files)", "supported", "→ `tags`",
            SC_U + "test_expectations_come_before_assertions_and_category_is_a_tag"),
        row("with_skill / without_skill", "supported", "`baseline: true`",
            SC_U + "test_the_loaded_spec_runs_each_eval_with_and_without_the_skill",
            INC + "test_skill_creator_skill_edit_reruns_only_its_with_skill_trials_and_revert_reuses"),
        row("the agent that runs the evals (not in the file)", "supported", "claude-code, as skill-creator always "
            "runs `claude -p`; the project's `[tool.skillmake] agent` overrides that default",
            SC_F + "test_seed_example_runs_and_shares_trials_with_its_native_twin",
            AD + "test_skillmake_validate_passes_for_evals_json_in_a_project_without_config"),
        row("`evals/evals.json` removed after `skillmake import`", "supported", "`evals/` holding the imported spec "
            "stays out of the skill: nothing re-runs",
            F + "test_import_zero_calls.py::test_a_skill_creator_import_runs_nothing_after_evals_json_is_removed"),
        row("`trigger-eval-set.json`", "supported", "read and checked against its schema into `trigger_tests`; run "
            "as trigger trials with run_eval.py's defaults (3 runs per query, threshold 0.5)",
            SC_U + "test_a_trigger_eval_set_beside_evals_json_becomes_trigger_tests",
            TRG + "test_skill_creators_trigger_eval_set_runs_and_evas_triggering_says_why_it_cannot"),
        row("`eval_metadata.json`, benchmark `iterations[]` history, timestamps", "supported", "eval_metadata.json "
            "per eval in `runs/<spec>/<case>/`; an iteration per change of results, `…Z` timestamps",
            SR_F + "test_eval_metadata_is_written_per_eval",
            SR_F + "test_benchmark_keeps_one_iteration_per_change_of_results"),
        row("`feedback.json` (reviews per run)", "supported", "written by `skillmake view` in skill-creator's shape, "
            "checked against feedback.schema.json; a broken file is never overwritten",
            U + "view/test_server.py::test_feedback_is_saved_validated_and_shown_again",
            U + "view/test_server.py::test_feedback_schema_good_and_bad_examples",
            U + "view/test_server.py::test_a_broken_feedback_file_is_never_overwritten"),
        row("trigger optimisation result (`best_description`, `iterations[]` train/test scores)", "supported",
            "`skillmake optimize-description SPEC`: skill-creator's loop and fields, best by test score",
            F + "test_optimize_description.py::test_calls_per_iteration_and_a_second_run_costs_nothing",
            F + "test_optimize_description.py::test_the_best_is_chosen_by_test_score_not_train"),
        row("shared trials with the hand-written native twin", "supported", "proven by counting calls",
            SC_F + "test_seed_example_runs_and_shares_trials_with_its_native_twin"),
        row("malformed files located at their own `line:col`", "supported", "the corpus in tests/data/seeds",
            SC_U + "test_each_malformed_file_is_reported_at_its_own_line_and_pointer",
            SC_F + "test_validate_names_the_seed_file_and_line"),
        row("incrementality catalogue", "supported", "as for a native spec",
            INC + "test_skill_creator_no_change_and_touch_without_change_run_nothing",
            INC + "test_skill_creator_more_trials_run_only_the_new_indices_and_fewer_run_nothing",
            INC + "test_skill_creator_whitespace_and_key_order_in_the_json_change_nothing",
            INC + "test_skill_creator_edit_of_any_skill_file_outside_evals_counts"),
    ),
    "caliper": (
        row("told apart from native by content (`tasks:`, no `cases:`)", "supported", "also a `skill:` mapping "
            "without `tasks:`, which is reported as missing `tasks` (caliper's name)",
            CA_U + "test_caliper_files_are_told_apart_by_content",
            CA_F + "test_invalid_caliper_spec_reports_exact_errors"),
        row("what caliper 0.1.0's own loader accepts", "supported", "unknown keys inside skill/judge/sandbox/a task, "
            "a task `id:`, null or empty strings (caliper tests them for truth), `tasks: []`, duplicate YAML keys "
            "(the last wins): accepted, each warned about; what it refuses (a YAML 1.1 `yes` or date where it wants "
            "text, too) refused. Over 72 specs both loaders agree on 65; the other 7 are listed under 'caliper: what "
            "still differs'", DC + "test_agreement_count", DC + "test_the_corpus_is_large_and_has_both_kinds"),
        row("`caliper run` / `caliper validate` command lines", "supported", "`skillmake caliper run|validate SPEC "
            "[FLAGS]`: caliper's flags, its results file (`--output`, `.caliper/results/<spec>/`) and exit codes "
            "(run: 0 whatever the verdict, 1 no file or an invalid spec, 2 no trial could run or a bad command line); "
            "plain `skillmake` keeps its own", CLI + "test_run_exits_0_with_a_failing_task_and_writes_calipers_results",
            CLI + "test_a_bad_command_line_exits_2_as_calipers_does",
            CLI + "test_validate_and_run_exit_1_for_an_invalid_spec_or_no_file",
            CLI + "test_run_exits_2_when_no_trial_could_run"),
        row("the whole run beside the real caliper 0.1.0", "supported", "three specs (judged; the assert/cleanup "
            "reference pattern; expect+assert with `--baseline`) against one fake API: the same successes per task "
            "and arm, the same exit code (3/3)", DE + "test_caliper_and_skillmake_give_the_same_pass_counts"),
        row("`skill.path`", "supported", "→ `skill` (`./SKILL.md` → its folder; the spec inside it is not part of "
            "the skill)", CA_U + "test_every_field_is_translated"),
        row("`skill.path` omitted (a bare agent)", "supported",
            "→ `skill: null`: the agent runs the tasks alone, keyed as its baseline (so `--baseline` costs nothing)",
            CA_U + "test_no_skill_path_is_the_bare_agent_keyed_as_its_baseline",
            CA_F + "test_a_spec_without_skill_path_runs_the_bare_agent_and_its_baseline_costs_nothing"),
        row("`skill.backend` (claude-code, codex, claude-api, openai-api, aliases), default claude-code", "supported",
            "→ `agent.kind`; with no backend written, the project's `[tool.skillmake] agent` overrides caliper's "
            "default (a backend the file names is the spec's own)", CA_U + "test_backend_names_and_aliases",
            CA_U + "test_backends_default_to_claude_code_as_in_caliper",
            AD + "test_a_caliper_spec_runs_on_the_projects_command_agent_not_the_claude_cli",
            AD + "test_a_backend_the_caliper_file_names_beats_the_projects_agent"),
        row("`skill.model`, `judge.model`", "supported", "→ `agent.model`, `judge.model`",
            CA_U + "test_every_field_is_translated"),
        row("`judge.backend` (default claude-code), `codex`", "supported", "→ `judge.provider`; the codex judge runs "
            "`codex exec --json --output-schema`", CJ + "test_codex_judges_with_a_schema_constrained_reply",
            E2E + "test_codex_cli_judge_returns_the_schema_constrained_verdict"),
        row("`sandbox.extra_path`, `sandbox.forbidden_files`", "supported", "same meaning",
            CA_U + "test_every_field_is_translated"),
        row("`tasks[]`, automatic ids `task-001`", "supported", "→ `cases[]`",
            CA_U + "test_task_ids_are_caliper_s_automatic_ones", CA_F + "test_an_edited_task_reruns_only_that_task"),
        row("`tasks[].name`, `setup`, `cleanup`, `prompt`", "supported", "`name` → `description`",
            CA_U + "test_every_field_is_translated"),
        row("`tasks[].expect`", "supported", "→ `expectations: [expect]`", CA_U + "test_every_field_is_translated"),
        row("`tasks[].assert` inline or `x.py`", "partial", "→ a `python` check, run before cleanup as caliper runs "
            "it (with a cleanup, by the trial itself: it sees files outside the workspace too, and is then part of "
            "the trial key); its working folder is the trial's workspace rather than the spec's folder",
            CA_U + "test_assert_is_a_script_path_only_when_one_line_ending_in_py",
            F + "test_isolation.py::test_trials_are_isolated",
            F + "test_caliper_cleanup_order.py::test_the_reference_pattern_passes_3_of_3_and_cleanup_still_runs",
            CA_U + "test_a_python_syntax_error_in_assert_is_at_its_line_in_the_seed"),
        row("rule: `expect` or `assert`; with both, both must pass", "supported", "located at the task",
            CA_U + "test_a_task_needs_expect_or_assert_located_at_the_task"),
        row("`--k`, `--workers`, `--timeout`, `--model`", "supported", "`--k` is `--trials`, `--workers` is `-j`; "
            "caliper's defaults `--k 3` and `--timeout 120` apply to a caliper spec, below the project config's "
            "`trials`/`timeout` (the command line and `SKILLMAKE_*` beat both); `--workers 4` is parallelism only: "
            "skillmake's `-j` default (1) stays",
            CU + "test_k_is_trials_and_workers_is_jobs",
            CD + "test_a_caliper_spec_runs_with_calipers_defaults",
            CD + "test_the_project_config_beats_calipers_default",
            CD + "test_k_and_trials_beat_calipers_default_and_the_environment",
            CA_F + "test_seed_runs_and_its_native_twin_shares_its_trials_and_verdicts",
            CA_F + "test_k_and_timeout_on_the_command_line_beat_calipers_defaults_and_keep_its_keys"),
        row("`--judge`", "partial", "`script` is what skillmake does in every mode (a task's `assert:` as a check, "
            "its `expect:` with the judge, both must pass); caliper's default `autorater` skips `assert:` (an "
            "assert-only task passes there without a check), skillmake runs it: the stricter gate; `autorater-sdk` "
            "is the Anthropic SDK judge (`--judge-provider anthropic`); another word is the judge model",
            CU + "test_judge_autorater_is_the_default_and_another_word_is_a_judge_model",
            CU + "test_calipers_script_mode_is_skillmakes_way_and_autorater_sdk_is_the_anthropic_sdk"),
        row("`--output FILE`", "supported", "caliper's results shape for a run of one spec (`run`, `skill_snapshot`, "
            "`task_results`, `aggregate`, `baseline`, `delta`: read by caliper's own model in the differential), "
            "beside every covered spec's report.json (run-output.schema.json)",
            CO + "test_output_holds_every_covered_specs_report", CO + "test_output_is_written_when_the_verdict_is_red",
            CLI + "test_run_exits_0_with_a_failing_task_and_writes_calipers_results"),
        row("`--baseline`", "supported", "every spec also runs without the skill for this run, keyed as "
            "`baseline: true`", CB + "test_baseline_runs_the_without_skill_arm_and_shares_keys_with_baseline_true"),
        row("`--verbose`", "supported", "`-v`: every task with its reason, and under each grade that ran, each "
            "judge's verdict with its evidence and reasoning (all of it in each cell's grading.json)",
            "tests/functional/test_output.py::test_verbose_lists_up_to_date_tasks_with_the_reason",
            CC + "test_verbose_shows_each_judges_verdict_and_reasoning_under_its_grade"),
        row("`CODEX_CLI_PATH`", "supported", "the codex binary, as caliper reads it (`SKILLMAKE_CODEX` first)",
            U + "run/test_agents_cli.py::test_calipers_codex_cli_path_names_codex_after_skillmakes_own_variable"),
        row("pass@k `1 − (1 − c/k)^k`", "supported", "`pass_at_k_caliper` beside the unbiased `pass_at_k` in every "
            "report; a caliper spec shows it first", PK + "test_caliper_formula_matches_its_readme",
            PK + "test_a_caliper_spec_leads_with_calipers_number", PK + "test_a_spec_loaded_from_caliper_says_so"),
        row("result snapshots (timestamp, skill content, referenced files, git SHA)", "supported",
            "`reports/<spec>/snapshots/<ts>-<run id>.json` per run that changed the report; files named by digest, "
            "their contents kept in the store under it",
            SN + "test_two_runs_with_a_skill_edit_give_two_snapshots_with_the_repos_commit",
            SN + "test_every_file_a_snapshot_names_is_kept_in_the_store_by_content",
            SN + "test_a_run_that_changes_nothing_adds_no_snapshot",
            SN + "test_outside_a_git_repository_the_snapshot_has_no_commit"),
        row("shared trials with the hand-written native twin", "supported", "",
            CA_U + "test_a_seed_and_its_native_twin_share_every_key",
            CA_F + "test_seed_runs_and_its_native_twin_shares_its_trials_and_verdicts"),
        row("malformed files located at their own `line:col`", "supported", "",
            CA_F + "test_the_invalid_corpus_is_large_and_complete",
            CA_F + "test_invalid_caliper_spec_reports_exact_errors"),
    ),
    "eva": (
        row("`prompt.xml` (the thing under test)", "supported", "a prompt skill: hashed, not installed, rendered "
            "into each case's prompt",
            EV_F + "test_editing_prompt_xml_or_inputs_yml_reruns_only_the_cases_that_render_differently"),
        row("`defaults.model`", "supported", "→ `agent.model` (the project's agent, else claude-code)",
            EV_U + "test_the_project_agent_runs_eva_with_evas_model"),
        row("`defaults.timeout_s`", "supported", "→ `timeout`",
            EV_U + "test_the_case_shape_example_translates_field_by_field"),
        row("`cases[].name`", "supported", "→ `cases[].id`",
            EV_U + "test_the_case_shape_example_translates_field_by_field"),
        row("`cases[].inputs`, `cases[].inputs_from` (two-place lookup; inline wins)", "supported", "",
            EV_U + "test_inputs_from_is_looked_up_under_the_root_first",
            EV_U + "test_inputs_from_falls_back_to_the_prompt_folder",
            EV_U + "test_inline_inputs_win_over_inputs_from"),
        row("`cases[].assert[]` (list style, all eight ops)", "supported", "→ `checks`",
            EV_U + "test_every_assert_op_becomes_its_native_check"),
        row("`json_schema`", "partial", "implemented (eva v1 always fails it)",
            EV_U + "test_every_assert_op_becomes_its_native_check"),
        row("`cases[].rubric`, `cases[].judge.pass_threshold`", "supported", "",
            EV_F + "test_a_failing_rubric_fails_the_case_as_in_eva"),
        row("`cases[].judge.model`", "supported", "each case its own judge model (`Case.judge_model`); the run's "
            "`--judge-model` first, then the case's, then `judge.model`",
            EV_U + "test_each_case_keeps_its_own_judge_model",
            EV_F + "test_each_case_is_judged_by_its_own_judge_model",
            U + "run/test_judges_case_model.py::test_a_spec_whose_cases_name_no_judge_model_keeps_its_keys"),
        row("rules: `assert` or `rubric`; `inputs` or `inputs_from`", "supported", "located",
            EV_U + "test_every_translation_error_is_collected_and_located"),
        row("`SCORE=n REASON=` replies", "supported", "",
            U + "run/test_judges.py::test_rubric_accepts_evas_plain_text_verdict"),
        row("`triggering`", "refused", "→ `trigger_tests`, reported as not run: eva's prompt file is not a skill an "
            "agent installs, and eva's trigger judge is a model's guess, which skillmake does not make",
            EV_U + "test_triggering_queries_become_trigger_tests",
            TRG + "test_skill_creators_trigger_eval_set_runs_and_evas_triggering_says_why_it_cannot"),
        row("`.eval.jsonl` history row", "supported", "eva's `{ts, all_passed, total, passed, failed_cases}` beside "
            "eval.yml, one per run that evaluated it",
            EH + "test_a_run_adds_one_eva_row_per_eval_and_a_no_op_adds_none",
            EH + "test_rows_eva_wrote_before_are_kept"),
        row("`cmd_promote` lifecycle (draft → tested → ready)", "supported", "`skillmake promote`, gated on the "
            "latest results of the spec as it is now; the state is kept beside the spec",
            PR + "test_an_eva_prompt_moves_draft_tested_ready_on_passing_results_only",
            PR + "test_failing_results_keep_the_prompt_where_it_is"),
        row("shared trials with the hand-written native twin", "supported", "",
            EV_F + "test_a_seed_and_its_native_twin_share_trials_and_verdicts"),
        row("malformed files located at their own `line:col`", "supported", "",
            EV_F + "test_the_corpus_of_malformed_eva_files_is_large_and_complete",
            EV_F + "test_a_malformed_eva_file_is_reported_at_its_own_line_and_pointer"),
    ),
}


def short(test: str) -> str:
    """`tests/unit/spec/test_adapters_eva.py::test_x` → `test_adapter_eva::test_x` (the page stays readable)."""
    path, _, name = test.partition("::")
    return f"{Path(path).stem}::{name}"


def table(fmt: str) -> str:
    lines = ["| seed field | status | in skillmake | proven by |", "|---|---|---|---|"]
    for r in FORMATS[fmt]:
        proof = "<br>".join(f"`{short(t)}`" for t in r.tests) or "—"
        status = f"**{r.status.upper()}**" if r.status == "gap" else r.status
        lines.append(f"| {r.field} | {status} | {r.note or '—'} | {proof} |")
    return "\n".join(lines)


def section() -> str:
    """The whole generated section, between its markers."""
    parts = ["<!-- conformance: generated by scripts/conformance.py; edit the rows there -->"]
    for fmt in FORMATS:
        parts.append(f"### {fmt}\n\n{table(fmt)}")
    parts.append("<!-- /conformance -->")
    return "\n\n".join(parts)


MARKED = re.compile(r"<!-- conformance: .*?<!-- /conformance -->", re.S)


def current(text: str) -> str | None:
    found = MARKED.search(text)
    return found.group(0) if found else None


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    if current(text) is None:
        print(f"{DOC}: no conformance markers; add the section once by hand", file=sys.stderr)
        return 1
    if "--write" in argv:
        DOC.write_text(MARKED.sub(lambda _: section(), text), encoding="utf-8")
        return 0
    if current(text) != section():
        print(f"{DOC}: the conformance section is stale; run python scripts/conformance.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
