"""Operations: metrics, alarms, the dashboard, rollouts (deployment guardrails), autoscaling,
scheduled capacity and the capacity notes."""
