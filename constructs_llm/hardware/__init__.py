"""Hardware: SageMaker instance types (from the packaged catalog) and the placement of one model
copy on them (instance type and devices per copy)."""
