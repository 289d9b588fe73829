pub mod frozen;
pub mod risk;
pub mod shell;
