"""ethosu"""
