"""features/watch"""
