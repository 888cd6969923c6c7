"""The colours of text the course writes into notebooks: try-it feedback, the check of
an exercise, the widgets' status lines and verdicts.

Each is one of JupyterLab's theme variables, so that it reads at WCAG AA contrast
(4.5:1) in the light and the dark theme alike: no single colour can (a red readable on
white is too dark on JupyterLab's dark background, and the reverse). Outside JupyterLab
(a static page of a lesson) the light theme's colour is the fallback.

>>> WRONG
'var(--jp-error-color1, #d32f2f)'
"""

from __future__ import annotations

#: ordinary text: near black on light, white on dark
TEXT = "var(--jp-content-font-color1, rgba(0, 0, 0, 0.87))"
#: quieter text (a table's notes): still AA on either background
QUIET = "var(--jp-content-font-color2, rgba(0, 0, 0, 0.54))"
#: right, a verdict that holds (the light theme's darkest green, the dark theme's mid one)
RIGHT = "var(--jp-success-color0, #1b5e20)"
#: wrong, refused, an error (a red that reads on white and on JupyterLab's dark grey)
WRONG = "var(--jp-error-color1, #d32f2f)"
