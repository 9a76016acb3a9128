"""Operations: metrics, alarms, rollouts (deployment guardrails), autoscaling,
scheduled capacity and the capacity notes."""
