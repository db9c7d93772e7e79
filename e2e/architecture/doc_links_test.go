package architecture

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is an inline Markdown link or image: [text](target "title").
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// mdCode is inline code, which holds no links.
var mdCode = regexp.MustCompile("`[^`]*`")

// mdFence opens or closes a fenced code block, whose contents are not
// Markdown.
var mdFence = regexp.MustCompile("^\\s*(```|~~~)")

// markdownFiles are the repository's Markdown documents checked for links.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "CHANGELOG.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// anchors are the heading anchors GitHub generates for a document:
// lowercased, punctuation dropped, spaces to hyphens, repeats numbered.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(doc, "\n") {
		if mdFence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestMarkdownLinksResolve: every relative link in the README, the
// contributor documents and docs/ names a file or directory that exists,
// and every #anchor names a heading of its target.
func TestMarkdownLinksResolve(t *testing.T) {
	root := repoRoot()
	for _, file := range markdownFiles(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for i, line := range strings.Split(string(raw), "\n") {
			if mdFence.MatchString(line) {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			line = mdCode.ReplaceAllString(line, "")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				abs := filepath.Join(root, file)
				if path != "" {
					abs = filepath.Join(filepath.Dir(abs), path)
					if _, err := os.Stat(abs); err != nil {
						t.Errorf("%s:%d: link to %s, which does not exist", file, i+1, target)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(abs, ".md") {
					continue
				}
				doc, err := os.ReadFile(abs)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(doc))[anchor] {
					t.Errorf("%s:%d: link to %s: no heading makes the anchor #%s", file, i+1, target, anchor)
				}
			}
		}
	}
}
