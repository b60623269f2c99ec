// `express4` is the alias package `npm:express@4`, which has no types of its own. The Express 5 types
// cover what the tests use of it (an app, `use`, `json()`), which did not change between the majors.
declare module 'express4' {
  import express from 'express';
  export default express;
}
