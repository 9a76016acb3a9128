#!/bin/sh
# Lambda Web Adapter handler: the adapter's /opt/bootstrap execs "$LAMBDA_TASK_ROOT/$_HANDLER",
# so the function's handler is this script ("runtime/run.sh" when the runtime directory sits at
# the root of the code asset). It starts the runtime server on $PORT; the adapter forwards each
# function URL request to it and streams the response (AWS_LWA_INVOKE_MODE=response_stream).
#
# The runtime's package name is this script's directory name, and its parent goes on
# PYTHONPATH, so the same script works in the asset ("python3 -m runtime") and in a source
# checkout. /opt/python (layers) and $LAMBDA_RUNTIME_DIR (the runtime's boto3) are added as
# the adapter's own Python examples do. $PYTHON overrides the interpreter (default python3).
# Keep LF line endings and mode 755.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
package=$(basename -- "$here")
export PYTHONPATH="$(dirname -- "$here"):/opt/python${LAMBDA_RUNTIME_DIR:+:$LAMBDA_RUNTIME_DIR}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname -- "$here")"
exec "${PYTHON:-python3}" -m "$package"
