//! Small widgets the panes are drawn with: a field list (label, value, slider, tag), a slider
//! and a capacity bar. They place cells; they do no bound arithmetic.

pub mod field_list;
pub mod memory_bar;
pub mod slider;

pub use field_list::FieldList;
pub use memory_bar::MemoryBar;
pub use slider::Slider;
