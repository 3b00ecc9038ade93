"""features/lookup"""
