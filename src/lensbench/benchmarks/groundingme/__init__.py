"""groundingme"""
