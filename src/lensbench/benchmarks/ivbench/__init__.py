"""ivbench"""
