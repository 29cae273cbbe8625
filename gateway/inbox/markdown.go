package inbox

import (
	"bytes"
	"html/template"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// md renders a process body. Without goldmark's unsafe option raw HTML in
// the Markdown is left out and links with dangerous schemes (javascript:,
// vbscript:, file:, data: other than images) lose their target, so the
// output is safe to show as it is.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify))

// markdown renders Markdown to HTML safe to put in a page.
func markdown(src string) template.HTML {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(src) + "</pre>")
	}
	return template.HTML(buf.String()) // safe: goldmark without WithUnsafe
}
