"""rgbth"""
