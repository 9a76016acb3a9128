#!/bin/sh
# Lambda Web Adapter handler: the adapter's /opt/bootstrap execs "$LAMBDA_TASK_ROOT/$_HANDLER",
# so the function's handler is this script ("streaming/runtime/run.sh": the code asset holds
# streaming/runtime/, streaming/formats.py and contract.py). It starts the runtime server on $PORT; the
# adapter forwards each function URL request to it and streams the response
# (AWS_LWA_INVOKE_MODE=response_stream).
#
# The runtime's module is named after this script's directory and its parent
# ("streaming.runtime"), and the directory above them goes on PYTHONPATH, so the same script
# works in the asset and in a source checkout. /opt/python (layers) and $LAMBDA_RUNTIME_DIR
# (the runtime's boto3) are added as the adapter's own Python examples do. $PYTHON overrides
# the interpreter (default python3). Keep LF line endings and mode 755.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
parent=$(dirname -- "$here")
root=$(dirname -- "$parent")
module="$(basename -- "$parent").$(basename -- "$here")"
export PYTHONPATH="$root:/opt/python${LAMBDA_RUNTIME_DIR:+:$LAMBDA_RUNTIME_DIR}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$root"
exec "${PYTHON:-python3}" -m "$module"
