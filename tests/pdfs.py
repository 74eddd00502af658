"""Real PDFs for the tests, written with reportlab (the dev extra): a text layer per page."""
from __future__ import annotations

import io


def pdf_bytes(pages: list[list[str] | None]) -> bytes:
    """A PDF with a text layer per page (lines) and a running page number; None is a page
    with only a drawing, like a scanned page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1)
    width, height = A4
    for number, lines in enumerate(pages, 1):
        if lines is None:
            pdf.rect(72, 200, 400, 500, fill=1)
        else:
            pdf.setFont("Helvetica", 11)
            y = height - 72
            for line in lines:
                pdf.drawString(72, y, line)
                y -= 16
            pdf.drawCentredString(width / 2, 40, f"- {number} -")
        pdf.showPage()
    pdf.save()
    return buf.getvalue()
