"""Image-generation backends: text-to-image generators (GOBench) and image editors (GenViP).

:mod:`.base` holds what both share (folder source, OpenAI Images API client, diffusers pipeline
loading, saving, errors); :mod:`.generators` and :mod:`.editors` are thin specialisations.
"""
