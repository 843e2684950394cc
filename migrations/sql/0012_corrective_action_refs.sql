-- Citus refuses ON DELETE SET NULL (and SET DEFAULT) on a foreign key that holds
-- the distribution column, as every key between tenant tables does. Corrective
-- actions keep pointing at their node and action item through plain keys, and
-- the stores clear those references themselves before deleting what they point
-- to (a deleted node's subtree, a deleted action item, a deleted project's items).
--
-- In one DO block, one change per ALTER TABLE: Citus refuses several DDL
-- statements in one query string and a key beside other subcommands. Without
-- the SET NULL keys the table can be distributed, so on a database that had the
-- citus extension before migrating this is where it is; the new keys come after,
-- as Citus 13.2 crashes adding a key from a local table to a distributed one.
-- Without Citus, pmapi_place only records the table's class.
do $$
begin
    alter table corrective_actions drop constraint corrective_actions_workspace_id_node_id_fkey;
    alter table corrective_actions drop constraint corrective_actions_workspace_id_action_item_id_fkey;
    perform pmapi_place('corrective_actions', 'distributed');
    alter table corrective_actions add constraint corrective_actions_node_fkey
        foreign key (workspace_id, node_id) references rrca_nodes (workspace_id, id);
    alter table corrective_actions add constraint corrective_actions_action_item_fkey
        foreign key (workspace_id, action_item_id) references action_items (workspace_id, id);
end $$;
