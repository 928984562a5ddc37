#!/usr/bin/env bash
# github-action.sh — the work of leakbench's GitHub Action (action.yml at the
# repository root): load (and probe) the caller's service with
# `leakbench run --target`, judge it against a stored baseline run (the
# default branch's) with `leakbench compare --mode regression` — is this
# build no worse than the baseline? — put the report, the regression
# verdict and the figures that moved on the job's summary page, set the
# step's outputs and exit with the verdict's code.
#
# action.yml passes its inputs in the environment (a composite action gets
# no INPUT_* variables by itself):
#
#   INPUT_TARGET        the service's MCP endpoint, any http(s) URL (required)
#   INPUT_SCENARIO      a scenario file, relative to the workspace
#   INPUT_PROFILE       a built-in profile, used when INPUT_SCENARIO is empty
#   INPUT_METRICS_URL   the service's Prometheus endpoint (joins the probes)
#   INPUT_TOKENS_FILE   bearer tokens, one a line (default: the scenario's)
#   INPUT_BASELINE      a stored run directory (the default branch's, restored
#                       from an artifact or the cache) to judge the run against
#   INPUT_REGRESSION_RULES
#                       noise rules of the regression verdict, FIGURE=RATIO:FLOOR
#                       each, split on white space (compare --regression-rule)
#   INPUT_NAME          the name of this run (heading, artifact)
#   INPUT_OUT           where everything goes (default leakbench-out)
#   INPUT_FAIL_ON       verdict (default), regression or exit-code, see below
#   INPUT_ARGS          more `leakbench run` flags, split on white space
#   LEAKBENCH_PROBE_DSN, LEAKBENCH_PGBOUNCER_ADMIN_DSN
#                       secrets: leakbench reads them from the environment
#                       itself; this script never puts them on a command
#                       line and never prints them
#   LEAKBENCH_BIN       the leakbench binary (default $RUNNER_TEMP/leakbench)
#
# It writes OUT/run (the run directory), OUT/compare (the regression
# verdict, with a baseline) and OUT/leakbench.log (what leakbench printed;
# leakbench redacts its output).
#
# Exit codes, as leakbench's: 0 pass; 99 the verdict failed; 2 bad usage;
# 130 interrupted; 1 the run could not be done. What fails the verdict is
# INPUT_FAIL_ON's: verdict — the run's own verdict (a leak check or a
# threshold: leakbench run exits 99 itself, and the script checks
# junit.xml as well, for a leakbench built before it did) or a regression
# against the baseline; regression — a regression against the baseline
# alone (a build as leaky as its baseline passes: it is no worse);
# exit-code — leakbench's own exit codes, run's and compare's. The summary
# and the outputs are written first, whatever the code.
set -euo pipefail

die_usage() {
	echo "::error title=leakbench::$*" >&2
	printf '# leakbench %s: bad usage (exit 2)\n\n%s\n' "$name" "$*" | summary
	run_dir=''
	write_outputs 2 "" "leakbench: bad usage: $*"
	exit 2
}

# write_outputs CODE REPORT VERDICT appends the step's outputs to
# $GITHUB_OUTPUT (when GitHub set it).
write_outputs() {
	[[ -n ${GITHUB_OUTPUT:-} ]] || return 0
	local verdict=${3//$'\n'/ }
	verdict=${verdict//$'\r'/ }
	{
		echo "exit-code=$1"
		echo "report=$2"
		echo "verdict=$verdict"
		echo "run-dir=${run_dir:-}"
		echo "compare-dir=${compare_dir:-}"
		echo "compare-report=${compare_report:-}"
		echo "compare-exit-code=${compare_rc:-}"
		echo "regression=${regression:-}"
	} >>"$GITHUB_OUTPUT"
}

# summary appends stdin to $GITHUB_STEP_SUMMARY (when GitHub set it).
summary() {
	if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
		cat >>"$GITHUB_STEP_SUMMARY"
	else
		cat >/dev/null
	fi
}

cd "${GITHUB_WORKSPACE:-.}"

target=${INPUT_TARGET:-}
scenario=${INPUT_SCENARIO:-}
profile=${INPUT_PROFILE:-}
metrics_url=${INPUT_METRICS_URL:-}
tokens_file=${INPUT_TOKENS_FILE:-}
baseline=${INPUT_BASELINE:-}
name=${INPUT_NAME:-leakbench}
out=${INPUT_OUT:-leakbench-out}
fail_on=${INPUT_FAIL_ON:-verdict}
bin=${LEAKBENCH_BIN:-}
if [[ -z $bin ]]; then
	if [[ -n ${RUNNER_TEMP:-} && -x $RUNNER_TEMP/leakbench ]]; then
		bin=$RUNNER_TEMP/leakbench
	else
		bin=leakbench
	fi
fi
run_dir=$out/run
compare_dir='' compare_report='' compare_rc='' regression=''

# An input marked required is not enforced by GitHub for composite actions.
[[ -n $target ]] || die_usage "the input target (your service's MCP endpoint) is required"
case $fail_on in
verdict | regression | exit-code) ;;
*) die_usage "fail-on: \"$fail_on\": want verdict (the run's verdict or a regression against the baseline fails), regression (a regression alone fails) or exit-code" ;;
esac
if [[ -n $scenario && -n $profile ]]; then
	die_usage "give scenario (a file) or profile (a built-in one), not both"
fi
[[ -n $scenario || -n $profile ]] || die_usage "give scenario (a scenario file in the workspace) or profile (a built-in one: ci, waiting, …; they call the reference gateway's tools)"
if [[ -n $scenario && ! -f $scenario ]]; then
	die_usage "scenario: no file $scenario in the workspace ($PWD)"
fi

args=(run --target "$target" --out "$run_dir" --force)
if [[ -n $scenario ]]; then
	args+=(--scenario "$scenario")
else
	args+=(--profile "$profile")
fi
[[ -z $tokens_file ]] || args+=(--tokens-file "$tokens_file")
if [[ -n ${LEAKBENCH_PROBE_DSN:-} ]]; then
	# leakbench takes the DSNs from LEAKBENCH_PROBE_DSN and
	# LEAKBENCH_PGBOUNCER_ADMIN_DSN itself.
	[[ -z $metrics_url ]] || args+=(--metrics-url "$metrics_url")
else
	unset LEAKBENCH_PROBE_DSN
	echo "::warning title=leakbench::no probe DSN (probe-dsn is empty — secrets are not given to workflows run from forks): load only, nothing probed; the thresholds decide"
	if [[ -n ${LEAKBENCH_PGBOUNCER_ADMIN_DSN:-} || -n $metrics_url ]]; then
		echo "::warning title=leakbench::pgbouncer-admin-dsn and metrics-url join the probes: left out without a probe DSN"
	fi
	unset LEAKBENCH_PGBOUNCER_ADMIN_DSN
fi
[[ -n ${LEAKBENCH_PGBOUNCER_ADMIN_DSN:-} ]] || unset LEAKBENCH_PGBOUNCER_ADMIN_DSN
if [[ -n ${INPUT_ARGS:-} ]]; then
	read -r -d '' -a extra <<<"$INPUT_ARGS" || true
	for a in "${extra[@]}"; do
		f=${a#-}
		f=${f#-}
		case ${f%%=*} in
		probe-dsn | dsn | pgbouncer-admin-dsn | pgbouncer | oauth-client-id | oauth-client-secret)
			die_usage "args: ${a%%=*} puts a secret on the command line; give it in the environment (the probe-dsn and pgbouncer-admin-dsn inputs; LEAKBENCH_OAUTH_CLIENT_ID, LEAKBENCH_OAUTH_CLIENT_SECRET) or as --${f%%=*}-file FILE" ;;
		out | target)
			die_usage "args: --${f%%=*} is the action's (the ${f%%=*} input)" ;;
		esac
	done
	args+=("${extra[@]}")
fi

mkdir -p "$out"
log=$out/leakbench.log
: >"$log"

# leakbench appends its report to $GITHUB_STEP_SUMMARY by itself, and so
# does compare; this script writes the one summary instead, so leakbench
# runs without the variable.
rc=0
shown=("${args[@]}")
shown[2]=$(sed -E 's#//[^/@]*@#//#; s#[?].*##' <<<"$target") # no userinfo, no query: they may hold secrets
echo "leakbench ${shown[*]}"
env -u GITHUB_STEP_SUMMARY "$bin" "${args[@]}" 2>&1 | tee -a "$log" || rc=$?

report=''
verdict=''
if [[ -s $run_dir/report.md ]]; then
	report=$run_dir/report.md
	verdict=$(head -n 1 "$report")
	verdict=${verdict#\# }
fi

code=$rc
if [[ $rc -eq 0 && $fail_on == verdict ]]; then
	# leakbench run exits 99 on a failed verdict; a build from before it
	# did exits 0 whatever it found. The verdict is in junit.xml either
	# way: the report's checks and thresholds.
	failures=''
	if [[ -f $run_dir/junit.xml ]]; then
		failures=$(sed -n 's/.*<testsuites[^>]* failures="\([0-9][0-9]*\)".*/\1/p' "$run_dir/junit.xml" | head -n 1)
	fi
	if [[ -z $failures ]]; then
		echo "::error title=leakbench::$run_dir/junit.xml is missing or unreadable: no verdict"
		code=1
	elif [[ $failures -gt 0 ]]; then
		code=99
	fi
fi
if [[ $fail_on == regression && $rc -eq 99 ]]; then
	code=0 # the run's own verdict is reported; the regression decides
fi

# With a baseline the run is judged against it: the regression question —
# is this build no worse than the baseline? — with the noise rules of
# leakbench's history (a healthy build passes against a healthy baseline;
# a build that holds, leaks or pins where the baseline did not fails).
if [[ -n $baseline && ($rc -eq 0 || $rc -eq 99) ]]; then
	base=''
	if [[ -f $baseline/summary.json ]]; then
		base=$baseline
	elif [[ -f $baseline/run/summary.json ]]; then
		base=$baseline/run # an earlier out of this action
	fi
	if [[ -z $base ]]; then
		echo "::warning title=leakbench::baseline $baseline holds no run (no summary.json) — the first run of the default branch has none yet: not judged against a baseline"
	else
		compare_dir=$out/compare
		compare_rc=0
		cargs=(compare --mode regression "$base" "$run_dir" --out "$compare_dir")
		if [[ -n ${INPUT_REGRESSION_RULES:-} ]]; then
			read -r -d '' -a rules <<<"$INPUT_REGRESSION_RULES" || true
			for r in "${rules[@]}"; do
				cargs+=(--regression-rule "$r")
			done
		fi
		echo "leakbench ${cargs[*]}"
		env -u GITHUB_STEP_SUMMARY "$bin" "${cargs[@]}" 2>&1 | tee -a "$log" || compare_rc=$?
		if [[ -s $compare_dir/report.md ]]; then
			compare_report=$compare_dir/report.md
		fi
		case $compare_rc in
		0) regression=pass ;;
		99) regression=fail ;;
		*)
			echo "::error title=leakbench::leakbench compare exited $compare_rc: the regression verdict could not be made"
			regression=error
			;;
		esac
		if [[ $regression == fail && $fail_on != exit-code ]]; then
			code=99
		elif [[ $regression == error && $code -eq 0 ]]; then
			code=$compare_rc
		elif [[ $fail_on == exit-code && $code -eq 0 ]]; then
			code=$compare_rc
		fi
	fi
fi

# The job's summary page: the regression verdict first (the question this
# step gates on), with the figures that moved, then the run's report.
{
	if [[ -n $compare_report ]]; then
		cmp_head=$(head -n 1 "$compare_report")
		echo "# leakbench $name — ${cmp_head#\# leakbench }"
		echo
		echo "Before is the baseline \`$baseline\`, after this run."
		echo
		tail -n +2 "$compare_report"
		echo
		echo "---"
		echo
	fi
	if [[ -n $report ]]; then
		cat "$report"
	else
		echo "# leakbench $name: the run could not be done (exit $rc)"
		echo
		echo '```text'
		tail -n 30 "$log"
		echo '```'
	fi
	echo
	echo "_leakbench ($name): exit $code. The run directory — report.html, plots, junit.xml — and the comparison are in the artifact \`$name\` of this workflow run._"
} | summary

write_outputs "$code" "$report" "$verdict"
case $code in
0) ;;
99)
	if [[ $regression == fail ]]; then
		echo "::error title=leakbench::regressed against the baseline: $(head -n 1 "${compare_report:-/dev/null}" | sed 's/^# leakbench //')"
	fi
	if [[ $regression != fail || $verdict == *FAIL* ]]; then
		echo "::error title=leakbench::${verdict:-the verdict failed}"
	fi
	;;
*) echo "::error title=leakbench::leakbench exited $code: the run could not be done (see above)" ;;
esac
exit "$code"
