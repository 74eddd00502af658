"""An answer for a person rather than a program: as console text (`answer_text`: `saksi ask`, the evaluation
reports, the labels the web page shares) and as a working paper's export (`export`: Markdown, DOCX)."""
