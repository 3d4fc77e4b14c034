//! [`Config`]: what a serve is told besides its listener and its service, shared by the accept
//! loop and every connection.
//!
//! Invariant: a `Config` holds only values its setters accepted (each setter of
//! [`Serve`](super::Serve) panics on a value it refuses), so nothing downstream checks them
//! again.

use std::time::Duration;

use super::{DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_STALL_TIMEOUT};

/// What a serve is told besides its listener and service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Config {
    pub(super) tcp_nodelay: bool,
    pub(super) max_connections: usize,
    pub(super) header_read_timeout: Option<Duration>,
    pub(super) stall_timeout: Option<Duration>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            tcp_nodelay: true,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            stall_timeout: Some(DEFAULT_STALL_TIMEOUT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_nodelay_the_documented_limit_hypers_timeout_and_a_stall_timeout() {
        let config = Config::default();
        assert!(config.tcp_nodelay);
        assert_eq!(config.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(config.header_read_timeout, Some(DEFAULT_HEADER_READ_TIMEOUT));
        assert_eq!(config.stall_timeout, Some(DEFAULT_STALL_TIMEOUT));
    }
}
