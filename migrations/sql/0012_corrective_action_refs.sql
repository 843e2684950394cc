-- Citus refuses ON DELETE SET NULL (and SET DEFAULT) on a foreign key that holds
-- the distribution column, as every key between tenant tables does. Corrective
-- actions keep pointing at their node and action item through plain keys, and
-- the stores clear those references themselves before deleting what they point
-- to (a deleted node's subtree, a deleted action item, a deleted project's items).
alter table corrective_actions
    drop constraint corrective_actions_workspace_id_node_id_fkey,
    drop constraint corrective_actions_workspace_id_action_item_id_fkey,
    add constraint corrective_actions_node_fkey
        foreign key (workspace_id, node_id) references rrca_nodes (workspace_id, id),
    add constraint corrective_actions_action_item_fkey
        foreign key (workspace_id, action_item_id) references action_items (workspace_id, id);
