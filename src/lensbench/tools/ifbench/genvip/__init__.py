"""GenViP (IF-Bench paper Sec. 4): infrared-to-RGB translation editors and the training-data
curation pipeline of Sec. 4.2. The evaluation side (input configurations of Tab. 6) lives in
:mod:`lensbench.benchmarks.ifbench`; the commands are ``lensbench genvip translate|curate``.
"""

from lensbench.tools.ifbench.genvip.editors import EDIT_PROMPT, EditError, ImageEditor, make_editor, translate_folder

__all__ = ["EDIT_PROMPT", "EditError", "ImageEditor", "make_editor", "translate_folder"]
