//! The MCP servers in force. A project's servers start only once the project is trusted: a
//! cloned repository must not be able to start a process. A trusted project's server wins over
//! the user's of the same name and is pinned per workspace.

use std::collections::BTreeMap;
use std::path::Path;

use super::layers::Layers;
use crate::mcp::ConfiguredServer;

/// The servers that may start, and the names of an untrusted project's servers (never started,
/// each also named in `ignored`).
pub(super) fn mcp_servers(
    workspace: &Path,
    layers: &Layers,
    ignored: &mut Vec<String>,
) -> (Vec<ConfiguredServer>, Vec<String>) {
    let mut servers: BTreeMap<String, ConfiguredServer> = layers
        .user
        .mcp_servers
        .iter()
        .map(|(name, config)| {
            let server = ConfiguredServer {
                name: name.clone(),
                config: config.clone(),
                file: layers.user_path.clone(),
                pin_key: name.clone(),
                from_project: false,
            };
            (name.clone(), server)
        })
        .collect();
    let mut not_trusted = Vec::new();
    for (name, config) in &layers.project.mcp_servers {
        if !layers.trusted {
            ignored.push(format!(
                "MCP server `{name}` from {} (the project is not trusted: run `airlock trust` in it to start it)",
                layers.project_path.display()
            ));
            not_trusted.push(name.clone());
            continue;
        }
        let server = ConfiguredServer {
            name: name.clone(),
            config: config.clone(),
            file: layers.project_path.clone(),
            pin_key: format!("{name}@{}", workspace.display()),
            from_project: true,
        };
        servers.insert(name.clone(), server);
    }
    (servers.into_values().collect(), not_trusted)
}
