"""engine/scan"""
