"""ifbench"""
