"""Import cost and synth time, measured side by side in one run.

1. Import cost, each in a fresh interpreter (best of several runs, wall time):
   ``import constructs_llm`` and ``from constructs_llm import LlmModel, LlmEndpoint`` against
   ``import aws_cdk.aws_sagemaker``. Goal: both at most 1.1x the baseline: the package loads
   nothing a user does not ask for (a model and an endpoint need only the core, sagemaker and
   iam modules; ec2, kms, sns, cloudwatch and applicationautoscaling load when a VPC, key,
   alarm topic, metric or autoscaling is used). ``parse_stream`` must not load ``aws_cdk`` at
   all (checked, not timed).
2. Synth time of one app holding 1, 10 and 50 endpoints (model + endpoint each), in this
   process after a warm-up. Goal: linear, at most 0.2 s per added endpoint.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

IMPORT_RUNS = 9
IMPORT_GOAL = 1.1
PER_ENDPOINT_GOAL_S = 0.2
SIZES = (1, 10, 50)

_ENV = dict(os.environ)  # bench/__main__.py sets the jsii banner switches


def _import_once(statement: str) -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_ENV, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def _import_times(*statements: str) -> list[float]:
    """Best time of each statement, measured in turns so machine load hits all alike."""
    best = [float("inf")] * len(statements)
    for _ in range(IMPORT_RUNS):
        for i, statement in enumerate(statements):
            best[i] = min(best[i], _import_once(statement))
    return best


def _cdk_modules(statement: str) -> list[str]:
    code = (
        f"import sys; {statement}; print(' '.join(sorted(m[8:] for m in sys.modules "
        "if m.startswith('aws_cdk.aws_') and m.count('.') == 1)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_ENV)
    return out.stdout.split()


def _parser_loads_cdk() -> bool:
    code = (
        "import sys; from constructs_llm.streaming import parse_stream; "
        "print(any(m == 'aws_cdk' or m.startswith('aws_cdk.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def _synth_seconds(endpoints: int) -> float:
    from aws_cdk import App, Stack

    from constructs_llm import Engine, LlmEndpoint, LlmModel, ModelSource

    started = time.perf_counter()
    app = App()
    stack = Stack(app, "Bench")
    for i in range(endpoints):
        model = LlmModel(
            stack,
            f"Model{i}",
            source=ModelSource.hugging_face(
                "meta-llama/Meta-Llama-3-8B-Instruct", needs_token=False
            ),
            engine=Engine.tgi(),
            instance_type="ml.g5.2xlarge",
        )
        LlmEndpoint(stack, f"Endpoint{i}", model=model)
    app.synth()
    return time.perf_counter() - started


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    core = "from constructs_llm import LlmModel, LlmEndpoint"
    base, lazy, full = _import_times("import aws_cdk.aws_sagemaker", "import constructs_llm", core)
    print(f"import aws_cdk.aws_sagemaker                       {base * 1000:8.0f} ms (baseline)")
    ratio = lazy / base
    print(
        f"import constructs_llm                              {lazy * 1000:8.0f} ms  {ratio:.2f}x "
        f"(goal <= {IMPORT_GOAL}x) {_verdict(ratio <= IMPORT_GOAL)}"
    )
    ratio = full / base
    print(
        f"{core}  {full * 1000:8.0f} ms  {ratio:.2f}x "
        f"(goal <= {IMPORT_GOAL}x) {_verdict(ratio <= IMPORT_GOAL)}; aws_cdk modules loaded: "
        f"{', '.join(_cdk_modules(core))}"
    )
    loads = _parser_loads_cdk()
    print(f"parse_stream loads aws_cdk: {loads} {_verdict(not loads)}")

    _synth_seconds(1)  # warm-up: jsii kernel start and first module loads
    times = {n: statistics.median(_synth_seconds(n) for _ in range(3)) for n in SIZES}
    for n, seconds in times.items():
        print(f"synth {n:3d} endpoint(s): {seconds:6.2f} s")
    per_endpoint = (times[SIZES[-1]] - times[SIZES[0]]) / (SIZES[-1] - SIZES[0])
    mid = times[SIZES[0]] + per_endpoint * (SIZES[1] - SIZES[0])
    linearity = times[SIZES[1]] / mid
    print(
        f"per added endpoint: {per_endpoint:.3f} s (goal <= {PER_ENDPOINT_GOAL_S} s) "
        f"{_verdict(per_endpoint <= PER_ENDPOINT_GOAL_S)}; 10-endpoint time is {linearity:.2f}x "
        "the straight line through 1 and 50"
    )


if __name__ == "__main__":
    main()
