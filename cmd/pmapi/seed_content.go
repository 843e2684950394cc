package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"

	"github.com/gofiber/fiber/v2"

	"github.com/pmapi/pmapi/internal/envelope"
)

// seeder sends the demo content through the real API with the demo key, so the
// seed takes the same validation, events and jobs as any integration's calls.
type seeder struct {
	app      *fiber.App
	clientID string
	key      string
}

func (s seeder) do(ctx context.Context, method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Client-ID", s.clientID)
	req.Header.Set("Authorization", s.key)
	resp, err := s.app.Test(req, -1)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return envelope.Data(resp, "seed "+method+" "+path)
}

// seedContent fills an empty demo workspace: two projects with a member, their
// work, and two similar root-cause analyses in the two projects, so similar,
// 5-why and look-across have something real to show.
func seedContent(ctx context.Context, s seeder, userID string) error {
	existing, err := s.do(ctx, "GET", "/openapi/v1/resource/project/list?limit=1&includeArchived=true", nil)
	if err != nil {
		return err
	}
	if items, _ := existing["items"].([]any); len(items) > 0 {
		return nil // seeded before
	}
	const base = "/openapi/v1/resource/"
	line4, err := s.do(
		ctx,
		"POST",
		base+"project/create",
		map[string]any{
			"name":        "Line 4 retrofit",
			"description": "Replace the hydraulic presses of line 4",
			"ragStatus":   "AMBER",
			"ownerId":     userID,
			"memberIds":   []string{userID},
			"startDate":   "2026-09-01",
			"targetDate":  "2027-03-31",
		},
	)
	if err != nil {
		return err
	}
	pack, err := s.do(
		ctx,
		"POST",
		base+"project/create",
		map[string]any{"name": "Packaging automation", "description": "Automate the end-of-line packing cell",
			"memberIds": []string{userID}},
	)
	if err != nil {
		return err
	}
	p1, p2 := line4["id"].(string), pack["id"].(string)
	var tasks []string
	for _, step := range projectContent(p1, p2) {
		out, err := s.do(ctx, step.method, step.path, step.body)
		if err != nil {
			return err
		}
		if id, _ := out["id"].(string); len(id) > 4 && id[:4] == "tsk_" {
			tasks = append(tasks, id)
		}
	}
	// Tasks in several states: one in progress, one in review, one done.
	for i, path := range [][]string{{"IN_PROGRESS"}, {"IN_PROGRESS", "REVIEW"}, {"DONE"}} {
		for _, status := range path {
			update := map[string]any{"taskId": tasks[i], "status": status}
			if _, err := s.do(ctx, "POST", base+"task/update", update); err != nil {
				return err
			}
		}
	}
	item, err := s.do(
		ctx,
		"POST",
		base+"action-item/create",
		map[string]any{"title": "Train night shift on seal handling", "ownerHint": "Maintenance lead", "projectId": p1},
	)
	if err != nil {
		return err
	}
	progress := map[string]any{"kind": "PROGRESS", "message": "Training slides drafted"}
	if _, err := s.do(ctx, "POST", base+"action-item/"+item["id"].(string)+"/log", progress); err != nil {
		return err
	}
	// The first analysis's why chain goes one step deeper, so a 5-why run on
	// the second (the newer, first in the list) has a next why to suggest.
	for _, a := range []struct {
		project, title, problem string
		whys                    []string
		root, action            string
	}{
		{
			project: p1,
			title:   "Hydraulic oil leak at press 2 cylinder seal",
			problem: "Press 2 loses hydraulic oil through the main cylinder seal every night shift.",
			whys:    []string{"The seal lip is cut at installation", "The assembly instruction has no torque step"},
			root:    "No torque check of the gland nut at assembly",
			action:  "Add a torque check of the gland nut to the assembly checklist",
		},
		{
			project: p2,
			title:   "Oil leaking from the shrink-wrapper hydraulic seal",
			problem: "The shrink-wrapper hydraulic unit leaks oil at the cylinder seal after maintenance.",
			whys:    []string{"The seal was fitted without torque verification"},
			root:    "Gland nut not torqued to specification after maintenance",
			action:  "Torque the gland nut and record it after every seal change",
		},
	} {
		rca, err := s.do(
			ctx,
			"POST",
			base+"rrca",
			map[string]any{"title": a.title, "problemStatement": a.problem, "projectId": a.project},
		)
		if err != nil {
			return err
		}
		id := rca["id"].(string)
		problem, err := s.do(ctx, "POST", base+"rrca/"+id+"/nodes", map[string]any{"kind": "PROBLEM", "text": a.problem})
		if err != nil {
			return err
		}
		parent := problem["id"]
		for _, text := range a.whys {
			why, err := s.do(ctx, "POST", base+"rrca/"+id+"/nodes",
				map[string]any{"kind": "WHY", "text": text, "parentId": parent})
			if err != nil {
				return err
			}
			parent = why["id"]
		}
		root, err := s.do(
			ctx,
			"POST",
			base+"rrca/"+id+"/nodes",
			map[string]any{"kind": "ROOT_CAUSE", "text": a.root, "parentId": parent},
		)
		if err != nil {
			return err
		}
		for range 2 {
			if _, err := s.do(ctx, "POST", base+"rrca/"+id+"/advance", nil); err != nil {
				return err
			}
		}
		corrective := map[string]any{"nodeId": root["id"], "title": a.action, "ownerHint": "Assembly"}
		if _, err := s.do(ctx, "POST", base+"rrca/"+id+"/corrective-actions", corrective); err != nil {
			return err
		}
	}
	return nil
}

type seedStep struct {
	method, path string
	body         any
}

// projectContent is the work inside the demo projects: tasks in several states,
// risks and notes.
func projectContent(p1, p2 string) []seedStep {
	const base = "/openapi/v1/resource/"
	create := func(kind string, body map[string]any) seedStep {
		return seedStep{"POST", base + kind + "/create", body}
	}
	task := func(project, title string, priority int) seedStep {
		return create("task", map[string]any{"projectId": project, "title": title, "priority": priority})
	}
	note := func(project, body string) seedStep {
		return create("note", map[string]any{"projectId": project, "body": body})
	}
	return []seedStep{
		task(p1, "Order replacement cylinder seals", 2),
		task(p1, "Drain and flush press 2 hydraulics", 1),
		task(p1, "Add a gland nut torque check to the line 4 start-up checklist", 3),
		task(p2, "Select the palletising robot", 2),
		task(p2, "Layout review of the packing cell", 4),
		create("risk", map[string]any{"projectId": p1, "title": "Seal supplier lead time", "severity": "HIGH",
			"description": "Only one supplier stocks the seal size"}),
		create("risk", map[string]any{"projectId": p2, "title": "Robot safety certification", "severity": "MEDIUM"}),
		note(p1, "Kick-off: presses are replaced one at a time; press 2 first."),
		note(p2, "Packing cell must keep running during the retrofit weekends."),
	}
}
