"""Rules: loading and checking them, the goal-directed engine, and their test cases."""

from workbench.rules.check import run_tests
from workbench.rules.engine import Engine
from workbench.rules.load import load_rules
from workbench.values.rules import Rule, RuleSet

__all__ = ["Engine", "Rule", "RuleSet", "load_rules", "run_tests"]
