package main

import (
	"fmt"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

// validate loads dir as OLM loads a bundle and runs the validators an
// OperatorHub submission runs. Warnings are printed; any error fails.
func validate(dir string) error {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return fmt.Errorf("load bundle %s: %w", dir, err)
	}
	validators := validation.DefaultBundleValidators.WithValidators(validation.OperatorHubValidator)
	failed := 0
	for _, r := range validators.Validate(b.ObjectsToValidate()...) {
		for _, e := range r.Errors {
			if e.Level == errors.LevelError {
				failed++
			}
			fmt.Printf("%s: %s %s: %s\n", e.Level, r.Name, e.Field, e.Detail)
		}
	}
	if failed > 0 {
		return fmt.Errorf("bundle %s: %d validation error(s)", dir, failed)
	}
	fmt.Printf("bundle %s (%s) is valid\n", dir, b.CSV.Name)
	return nil
}
