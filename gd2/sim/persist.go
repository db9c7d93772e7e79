package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// State is written whole after every change, via a temporary file and a
// rename, so a crash never leaves a torn file behind.

func loadState(path string) (*model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := newModel()
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

func (s *Simulator) persistLocked() error {
	if s.cfg.StatePath == "" {
		return nil
	}
	b, err := json.MarshalIndent(s.m, "", " ")
	if err != nil {
		return fmt.Errorf("encode simulator state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.cfg.StatePath), ".gd2sim-state-*")
	if err != nil {
		return fmt.Errorf("save simulator state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("save simulator state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save simulator state: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.cfg.StatePath); err != nil {
		return fmt.Errorf("save simulator state: %w", err)
	}
	return nil
}

// Save writes the state now (a no-op without Config.StatePath).
func (s *Simulator) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	return s.persistLocked()
}
