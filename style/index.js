import './base.css';
import './apps.css';
