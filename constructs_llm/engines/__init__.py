"""Engine implementations, one module per engine family; ``engines.engine.Engine`` has
their factories. ``base`` is the contract, ``context`` what an engine is told about one model
copy, ``settings`` how a setting and its check are declared, ``env_rules`` the checks of user
env, ``messages`` the text of every engine problem."""
