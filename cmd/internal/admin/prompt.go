package admin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// prompter asks questions on one stream and reads the answers, line by
// line, from another. One buffered reader serves every question, so
// answers typed ahead (or piped in) are not lost between two questions.
type prompter struct {
	in  *bufio.Reader
	out io.Writer

	start sync.Once
	lines chan line
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	return &prompter{in: bufio.NewReader(in), out: out}
}

// errNoAnswer is the end of input before an answer.
var errNoAnswer = errors.New("end of input")

// ask prints "question [def]: " (without brackets when def is empty) and
// returns the answer, trimmed, or def for an empty line. The end of input
// is errNoAnswer, unless a last line without newline was typed; ctx
// ending (Ctrl-C) stops the wait for an answer.
func (p *prompter) ask(ctx context.Context, question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", question)
	}
	line, err := p.readLine(ctx)
	if errors.Is(err, io.EOF) && line == "" {
		fmt.Fprintln(p.out)
		return "", errNoAnswer
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if ans := strings.TrimSpace(line); ans != "" {
		return ans, nil
	}
	return def, nil
}

// line is one read of the input.
type line struct {
	text string
	err  error
}

// readLine reads one line, or returns ctx's error once it ends first. One
// goroutine, started by the first read, reads the input line by line and
// hands each line to the next readLine, so an interrupted wait loses no
// line and no two reads race.
func (p *prompter) readLine(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		fmt.Fprintln(p.out)
		return "", fmt.Errorf("interrupted: %w", err)
	}
	p.start.Do(func() {
		p.lines = make(chan line)
		go func() {
			for {
				text, err := p.in.ReadString('\n')
				p.lines <- line{text, err}
				if err != nil {
					return
				}
			}
		}()
	})
	select {
	case l := <-p.lines:
		if l.err != nil && !errors.Is(l.err, io.EOF) {
			return l.text, fmt.Errorf("read the answer: %w", l.err)
		}
		return l.text, l.err
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", fmt.Errorf("interrupted: %w", ctx.Err())
	}
}

// confirm asks question with a [y/N] choice: only y or yes (any case) is
// a yes; an empty line or the end of input is a no.
func (p *prompter) confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprintf(p.out, "%s [y/N]: ", question)
	line, err := p.readLine(ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
