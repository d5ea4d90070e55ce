"""passes/planner"""
