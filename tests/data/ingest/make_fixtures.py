#!/usr/bin/env python3
"""Writes the synthetic ingest fixtures: an image-only PDF (a "scan" without a text layer),
DOCX files (numbering, tables, bold headings; malformed and not-a-zip variants).
The PDFs derived from gocall-promotion-agreement.pdf were made with:
    head -c 20000 gocall-promotion-agreement.pdf > truncated.pdf
    qpdf --encrypt user-pw owner-pw 256 -- gocall-promotion-agreement.pdf encrypted.pdf
    pdfunite gocall-promotion-agreement.pdf image-only.pdf mixed-text-and-scan.pdf
Run from this folder: python3 make_fixtures.py"""
import zipfile
import zlib


def image_only_pdf(path):
    width, height = 120, 160  # pixels, drawn over a US Letter page
    rows = []
    for y in range(height):
        row = bytearray(b"\xff" * width)
        if y % 12 in (4, 5, 6) and 10 < y < 150:  # grey bars like lines of scanned text
            for x in range(12, 108 - (y * 7) % 30):
                row[x] = 0x20
        rows.append(bytes(row))
    pixels = zlib.compress(b"".join(rows))
    content = b"q 612 0 0 792 0 0 cm /Im1 Do Q"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
        % (width, height, len(pixels)) + pixels + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    open(path, "wb").write(out)


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
CONTENT_TYPES = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
</Types>"""
RELS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
</Relationships>"""
NUMBERING = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering {W}>
<w:abstractNum w:abstractNumId="0">
 <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/><w:suff w:val="space"/></w:lvl>
 <w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl>
 <w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="(%3)"/></w:lvl>
 <w:lvl w:ilvl="3"><w:start w:val="1"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="(%4)"/></w:lvl>
</w:abstractNum>
<w:abstractNum w:abstractNumId="1">
 <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="upperRoman"/><w:lvlText w:val="Article %1"/><w:suff w:val="space"/></w:lvl>
</w:abstractNum>
<w:abstractNum w:abstractNumId="2">
 <w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="\uf0b7"/></w:lvl>
</w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>
<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>
<w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>
</w:numbering>"""
STYLES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles {W}>
<w:style w:type="paragraph" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/>
 <w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/></w:rPr></w:style>
</w:styles>"""


def para(text, num=None, style=None, bold=False, extra=""):
    ppr = ""
    if style:
        ppr += f'<w:pStyle w:val="{style}"/>'
    if num:
        ppr += f'<w:numPr><w:ilvl w:val="{num[1]}"/><w:numId w:val="{num[0]}"/></w:numPr>'
    rpr = "<w:rPr><w:b/></w:rPr>" if bold else ""
    return (f"<w:p>{'<w:pPr>' + ppr + '</w:pPr>' if ppr else ''}"
            f'<w:r>{rpr}<w:t xml:space="preserve">{text}</w:t></w:r>{extra}</w:p>')


def document_xml():
    body = [
        para("MASTER SERVICES AGREEMENT", bold=True),
        para("This Master Services Agreement is made between Alpha Ltd and Beta GmbH. "
             "It sets out the terms on which Alpha provides services to Beta."),
        para("General Terms", num=(2, 0)),
        para("Definitions", style="Heading1"),
        para('"Services" means the services described in Schedule 1.', num=(1, 1)),
        para('"Fees" means the fees set out in Schedule 2.', num=(1, 1)),
        para("Term and Termination", style="Heading1"),
        para("Term. This Agreement starts on the Effective Date and runs for two years.", num=(1, 1)),
        para("Termination. Either party may terminate:", num=(1, 1)),
        para("for material breach not cured within 30 days;", num=(1, 2)),
        para("on insolvency of the other party, where", num=(1, 2)),
        para("a receiver is appointed; or", num=(1, 3)),
        para("it ceases business.", num=(1, 3)),
        para("Governing Law", style="Heading1"),
        para("This Agreement is governed by the laws of England.",
             extra='<w:r><w:tab/><w:t>Tabbed</w:t><w:br/><w:t>Next line</w:t></w:r>'),
        para("a bullet point", num=(3, 0)),
        "<w:tbl><w:tr><w:tc>" + para("Party") + "</w:tc><w:tc>" + para("Address") + "</w:tc></w:tr>"
        "<w:tr><w:tc>" + para("Alpha Ltd") + "</w:tc><w:tc>" + para("1 High Street, London") + "</w:tc></w:tr></w:tbl>",
        '<w:p><w:r><w:t>Deleted </w:t></w:r><w:del><w:r><w:delText>secret</w:delText></w:r></w:del>'
        '<w:r><w:t>text stays out.</w:t></w:r></w:p>',
    ]
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document {W}><w:body>'
            + "".join(body) + "<w:sectPr/></w:body></w:document>")


def sect_pr(kind):
    return "<w:sectPr/>" if kind is None else f'<w:sectPr><w:type w:val="{kind}"/></w:sectPr>'


def sections_xml(types, page_break=False):
    """Three paragraphs per section, one section per entry of `types`: its w:type (None: none,
    i.e. nextPage), which says how that section starts after the one before. Each section but
    the last ends with a paragraph holding its sectPr; the last one's is the body's. With
    page_break, the second paragraph of the first section ends in <w:br w:type="page"/>."""
    body = []
    for s, kind in enumerate(types):
        last = s == len(types) - 1
        for p in range(3):
            extra = ('<w:r><w:br w:type="page"/></w:r>' if page_break and s == 0 and p == 1 else "")
            text = f"Section {s + 1} paragraph {p + 1}."
            if p == 2 and not last:
                body.append(f'<w:p><w:pPr>{sect_pr(kind)}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>')
            else:
                body.append(para(text, extra=extra))
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document {W}><w:body>'
            + "".join(body) + sect_pr(types[-1]) + "</w:body></w:document>")


def docx(path, document, numbering=NUMBERING, styles=STYLES):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", CONTENT_TYPES)
        z.writestr("_rels/.rels", RELS)
        z.writestr("word/document.xml", document)
        if numbering:
            z.writestr("word/numbering.xml", numbering)
        if styles:
            z.writestr("word/styles.xml", styles)


if __name__ == "__main__":
    image_only_pdf("image-only.pdf")
    docx("numbered.docx", document_xml())
    docx("malformed-xml.docx", document_xml()[:-40])
    docx("malformed-numbering.docx", document_xml(), numbering=NUMBERING[:300])
    docx("no-document-part.docx", document_xml())
    with zipfile.ZipFile("no-document-part.docx", "w") as z:
        z.writestr("[Content_Types].xml", CONTENT_TYPES)
        z.writestr("hello.txt", "no word part here")
    # Pages from section breaks that start a new page, from a page break, and sections
    # counted as pages where the file has no page break at all.
    docx("section-pages.docx", sections_xml([None, "continuous", "nextPage"]))
    docx("page-break.docx", sections_xml([None], page_break=True))
    docx("continuous-sections.docx", sections_xml([None, "continuous", "continuous"]))
    open("not-a-zip.docx", "wb").write(b"PK\x03\x04 this is not really a zip archive")
