"""The invoker's infrastructure: the Lambda function that runs ``streaming/runtime/``, its URL,
auth, metrics, CloudFront distribution and the routes to its targets."""
