"""The workers: the job runners (in-process and RQ), automatic steps, notifications and
webhook delivery, and analyses' execution (docs/operations.md)."""
