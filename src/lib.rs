pub mod approval;
