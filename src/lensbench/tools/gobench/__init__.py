"""gobench"""
