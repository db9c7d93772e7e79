package sim

import (
	"net/http"
	"time"
)

// GD2 keeps roughly the last ten minutes of events.
const eventWindow = 10 * time.Minute

func (s *Simulator) recordEventLocked(name string, data map[string]string) {
	now := s.clock.Now()
	origin := s.servingID
	if origin == "" {
		if p := s.m.firstOnline(); p != nil {
			origin = p.ID
		}
	}
	s.m.Events = append(s.m.Events, event{ID: s.newUUID(), Name: name, Data: data, Origin: origin, Time: now})
	cut := 0
	for cut < len(s.m.Events) && now.Sub(s.m.Events[cut].Time) > eventWindow {
		cut++
	}
	s.m.Events = s.m.Events[cut:]
}

func eventsList(c *call) (int, any, error) {
	out := []wireEvent{}
	for _, e := range c.m.Events {
		if c.now.Sub(e.Time) > eventWindow {
			continue
		}
		out = append(out, wireEvent{ID: e.ID, Name: e.Name, Data: e.Data, Origin: e.Origin, Timestamp: e.Time.UTC().Format(time.RFC3339Nano)})
	}
	return http.StatusOK, out, nil
}
