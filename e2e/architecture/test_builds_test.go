package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// buildHelper is the one file of the tests and their framework allowed to
// run `go build`: the fallback for a developer's `go test` by hand, which
// make test never reaches (it builds every binary the tests run first,
// hack/build-test-binaries.sh).
const buildHelper = "e2e/framework/build.go"

// TestNoTestBuildsABinary: no test and no file of the e2e framework but
// buildHelper starts a `go build`. A build inside a test runs on the
// test's clock: on a cold machine, while every package compiled at once,
// such builds outlasted the tests' own limits (issue 48).
func TestNoTestBuildsABinary(t *testing.T) {
	root := repoRoot()
	fset := token.NewFileSet()
	helperBuilds := 0
	skip := func(rel string) bool {
		name := filepath.Base(rel)
		return name == "testdata" || name == "node_modules" || rel == "bin" || rel == "dist"
	}
	err := walkGoFiles(root, skip, func(path, rel string) error {
		inFramework := strings.HasPrefix(rel, "e2e/framework/")
		if !strings.HasSuffix(rel, "_test.go") && !inFramework {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, pos := range goBuilds(f) {
			if rel == buildHelper {
				helperBuilds++
				continue
			}
			t.Errorf("%s:%d starts a go build: make test builds every binary the tests run before they start "+
				"(hack/build-test-binaries.sh); take it from e2e/framework's Binary values (prebuilt.go)", rel, fset.Position(pos).Line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The helper's own builds prove the check sees a real one.
	if helperBuilds == 0 {
		t.Errorf("no go build found in %s: the check no longer recognises one", buildHelper)
	}
}

func TestGoBuildsFindsPlantedBuilds(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       int
	}{
		{"literal", `exec.Command("go", "build", "./cmd/x")`, 1},
		{"with a context", `exec.CommandContext(ctx, "go", "build", "-race", "-o", out, "./cmd/anthill")`, 1},
		{"arguments built apart", `args := []string{"build", "-o", dir}; cmd := exec.CommandContext(ctx, "go", args...); _ = cmd`, 1},
		{"go by its path", `exec.Command(filepath.Join(goroot, "bin", "go"), "build", ".")`, 1},
		{"two builds", `exec.Command("go", "build", "a"); exec.Command("go", "build", "b")`, 2},
		{"go list", `exec.Command("go", "list", "-deps", "./...")`, 0},
		{"go tool", `exec.Command("go", "tool", "pprof", "-top", path)`, 0},
		{"another program's build", `exec.Command("docker", "build", ".")`, 0},
		{"arguments without build", `args := []string{"list", "-json"}; exec.Command("go", args...)`, 0},
		{"build in a message only", `t.Log("go build"); exec.Command("git", "status")`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "package p\n\nfunc f() {\n" + c.body + "\n}\n"
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(goBuilds(f)); got != c.want {
				t.Errorf("%d go builds found in %s, want %d", got, c.body, c.want)
			}
		})
	}
}

// goBuilds returns where f runs `go build` through os/exec: a call of
// exec.Command or exec.CommandContext whose program is go (the literal,
// or a path ending in it) with "build" among its arguments, or, when the
// arguments are passed as a slice, anywhere in the same top-level
// declaration.
func goBuilds(f *ast.File) []token.Pos {
	var out []token.Pos
	for _, decl := range f.Decls {
		declHasBuild := hasString(decl, "build")
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "exec" {
				return true
			}
			prog := 0
			switch sel.Sel.Name {
			case "Command":
			case "CommandContext":
				prog = 1
			default:
				return true
			}
			if len(call.Args) <= prog || !isGo(call.Args[prog]) {
				return true
			}
			args := call.Args[prog+1:]
			if slices.ContainsFunc(args, func(a ast.Expr) bool { return stringValue(a) == "build" }) ||
				(call.Ellipsis.IsValid() && declHasBuild) {
				out = append(out, call.Pos())
			}
			return true
		})
	}
	return out
}

// isGo reports whether e names the go command: the literal "go", or an
// expression (filepath.Join, say) whose last string literal is "go" or
// ends in "/go".
func isGo(e ast.Expr) bool {
	last := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			last = stringValue(lit)
		}
		return true
	})
	return last == "go" || strings.HasSuffix(last, "/go")
}

// hasString reports whether a string literal with value s appears in n.
func hasString(n ast.Node, s string) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && stringValue(e) == s {
			found = true
		}
		return !found
	})
	return found
}

// stringValue is the value of a string literal, else "".
func stringValue(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	v, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return v
}
