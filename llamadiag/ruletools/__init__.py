"""ruletools"""
