package admin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// prompter asks questions on one stream and reads the answers, line by
// line, from another. One buffered reader serves every question, so
// answers typed ahead (or piped in) are not lost between two questions.
type prompter struct {
	in  *bufio.Reader
	out io.Writer
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	return &prompter{in: bufio.NewReader(in), out: out}
}

// errNoAnswer is the end of input before an answer.
var errNoAnswer = errors.New("end of input")

// ask prints "question [def]: " (without brackets when def is empty) and
// returns the answer, trimmed, or def for an empty line. The end of input
// is errNoAnswer, unless a last line without newline was typed.
func (p *prompter) ask(question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", question)
	}
	line, err := p.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the answer: %w", err)
	}
	if errors.Is(err, io.EOF) && line == "" {
		fmt.Fprintln(p.out)
		return "", errNoAnswer
	}
	if ans := strings.TrimSpace(line); ans != "" {
		return ans, nil
	}
	return def, nil
}

// confirm asks question with a [y/N] choice: only y or yes (any case) is
// a yes; an empty line or the end of input is a no.
func (p *prompter) confirm(question string) (bool, error) {
	fmt.Fprintf(p.out, "%s [y/N]: ", question)
	line, err := p.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
