import './base.css';
import './apps.css';
import './help.css';
