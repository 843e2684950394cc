package risk

import (
	"time"

	"github.com/pmapi/pmapi"
	"github.com/pmapi/pmapi/api"
	"github.com/pmapi/pmapi/resource/project"
)

// View is a risk in the API and in event payloads.
type View struct {
	ID          string     `json:"id" example:"rsk_01JD8X3Q4ZP6V1T9K2M5N7R8S0"`
	ProjectID   string     `json:"projectId"`
	Title       string     `json:"title"`
	Description *string    `json:"description"`
	Severity    string     `json:"severity" enum:"LOW,MEDIUM,HIGH,CRITICAL"`
	Status      string     `json:"status" enum:"OPEN,MITIGATING,RESOLVED"`
	OwnerID     *string    `json:"ownerId" format:"uuid"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	ArchivedAt  *time.Time `json:"archivedAt"`
}

// ToView converts a stored risk.
func ToView(r Risk) View {
	return View{
		ID:          pmapi.FormatID(IDPrefix, r.ID),
		ProjectID:   pmapi.FormatID(project.IDPrefix, r.ProjectID),
		Title:       r.Title,
		Description: r.Description,
		Severity:    r.Severity,
		Status:      r.Status,
		OwnerID:     pmapi.FormatOptionalUserID(r.OwnerID),
		CreatedAt:   r.CreatedAt,
		UpdatedAt:   r.UpdatedAt,
		ArchivedAt:  r.ArchivedAt,
	}
}

// List is a page of risks.
type List api.PageOf[View]

// CreateRequest registers a risk.
type CreateRequest struct {
	ProjectID   string  `json:"projectId"`
	Title       string  `json:"title"`
	Description *string `json:"description,omitempty"`
	Severity    string  `json:"severity,omitempty" enum:"LOW,MEDIUM,HIGH,CRITICAL" doc:"Default MEDIUM"`
	OwnerID     *string `json:"ownerId,omitempty" format:"uuid"`
}

// UpdateRequest changes a risk; absent fields stay, null clears nullable ones.
type UpdateRequest struct {
	RiskID      string  `json:"riskId"`
	Status      *string `json:"status,omitempty" enum:"OPEN,MITIGATING,RESOLVED" doc:"Moves by the status table" nullable:"false"`
	Title       *string `json:"title,omitempty" nullable:"false"`
	Description *string `json:"description,omitempty"`
	Severity    *string `json:"severity,omitempty" enum:"LOW,MEDIUM,HIGH,CRITICAL" nullable:"false"`
	OwnerID     *string `json:"ownerId,omitempty" format:"uuid"`
}

// IDRequest names one risk (archive, restore).
type IDRequest struct {
	RiskID string `json:"riskId"`
}

// StatusEvent is the data of risk.status_changed, risk.opened and risk.resolved.
type StatusEvent struct {
	RiskID    string `json:"riskId"`
	ProjectID string `json:"projectId"`
	From      string `json:"from" enum:"OPEN,MITIGATING,RESOLVED"`
	To        string `json:"to" enum:"OPEN,MITIGATING,RESOLVED"`
}

// DeletedEvent is the data of risk.deleted (a risk goes with its project).
type DeletedEvent struct {
	RiskID    string `json:"riskId"`
	ProjectID string `json:"projectId"`
}
